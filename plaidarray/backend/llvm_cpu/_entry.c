/* Calling an executable's entry function, in C.

   A compiled module is one function void f(void **table, int64 segment, int64 start, int64
   stop) over a table of buffer handles (executable.py). Through ctypes a call costs about
   two microseconds of argument conversion and table filling, as much as the rest of a
   small cached read; this module makes the same call from C: it fills a table on the
   stack with each buffer object's address (the code loads the data pointer from the
   object, transfer.DATA_POINTER_OFFSET) and the bound constants' handles, and calls the
   function with the GIL released, as ctypes does. executable.py keeps the ctypes call for
   where this is not built, or the interpreter's array layout is unknown.

   call(address, buffers, constant_handles, outputs, temporaries) -> None */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef void (*entry_fn)(void **, int64_t, int64_t, int64_t);

/* Tables up to this many entries live on the stack; larger ones are allocated. */
#define STACK_TABLE 64

static void add_objects(void **table, Py_ssize_t *n, PyObject *list) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) table[(*n)++] = (void *)PyList_GET_ITEM(list, i);
}

static int add_handles(void **table, Py_ssize_t *n, PyObject *list) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        void *handle = PyLong_AsVoidPtr(PyList_GET_ITEM(list, i));
        if (handle == NULL && PyErr_Occurred()) return -1;
        table[(*n)++] = handle;
    }
    return 0;
}

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 5 || !PyList_Check(args[1]) || !PyList_Check(args[2]) || !PyList_Check(args[3]) ||
        !PyList_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "call(address, buffers, constant_handles, outputs, temporaries: lists)");
        return NULL;
    }
    PyObject *buffers = args[1], *constants = args[2], *outputs = args[3], *temporaries = args[4];
    entry_fn function = (entry_fn)PyLong_AsVoidPtr(args[0]);
    if (function == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "null entry address");
        return NULL;
    }
    Py_ssize_t size = PyList_GET_SIZE(buffers) + PyList_GET_SIZE(constants) + PyList_GET_SIZE(outputs) +
                      PyList_GET_SIZE(temporaries);
    void *on_stack[STACK_TABLE];
    void **table = size <= STACK_TABLE ? on_stack : PyMem_Malloc(size * sizeof(void *));
    if (table == NULL) return PyErr_NoMemory();
    Py_ssize_t n = 0;
    add_objects(table, &n, buffers);
    if (add_handles(table, &n, constants)) {
        if (table != on_stack) PyMem_Free(table);
        return NULL;
    }
    add_objects(table, &n, outputs);
    add_objects(table, &n, temporaries);
    /* The lists, held by the caller, keep every buffer alive while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS
    function(table, -1, 0, 0);
    Py_END_ALLOW_THREADS
    if (table != on_stack) PyMem_Free(table);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "call(address, buffers, constant_handles, outputs, temporaries): run it all."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__entry(void) { return PyModule_Create(&module); }
