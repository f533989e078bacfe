/* Reading and writing a Python class's ``__slots__`` from C at the offsets their member
   descriptors give (as Cython's extension types do), shared by ``_graph.c`` and
   ``_scalars.c``, which read ``Node`` and ``Shape`` this way. */

#ifndef PLAIDARRAY_SLOTS_H
#define PLAIDARRAY_SLOTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* The offset of ``type``'s object slot ``name`` into *offset (0), or -1 with TypeError. */
static inline int slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL) return -1;
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
    if (ok) *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    else PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
    Py_DECREF(descr);
    return ok ? 0 : -1;
}

/* Whether ``device`` (a node's: None or a ``Device``) keeps its buffers in host memory,
   its ``transfers`` being ``host`` (1), not (0), or -1 on error. */
static inline int transfers_are(PyObject *device, PyObject *name, PyObject *host) {
    if (device == Py_None) return 1;
    PyObject *transfers = PyObject_GetAttr(device, name);
    if (transfers == NULL) return -1;
    int same = transfers == host;
    Py_DECREF(transfers);
    return same;
}

#endif
