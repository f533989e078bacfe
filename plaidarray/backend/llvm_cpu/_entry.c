/* Calling an executable's kernels, in C.

   An executable is a list of steps, each a call of a compiled kernel
   void k(void **buffers, const int64_t *dims, int64 start, int64 stop) on a table of
   its own buffers' data pointers (executable.py). Through ctypes a call costs about two
   microseconds of argument conversion and table filling, as much as the rest of a small
   cached read; this module makes the calls from C: it reads each buffer object's data
   pointer (at the offset transfer.DATA_POINTER_OFFSET found in the array object), fills
   each kernel's table on the stack and calls the kernels in order with the GIL released,
   as ctypes does. executable.py keeps the ctypes calls for where this is not built, or
   the interpreter's array layout is unknown.

   configure(data_pointer_offset) -> None
   run(plan, buffers, constant_pointers, outputs, temporaries, dims) -> None

   plan is bytes of int64 words, per step: the kernel's address, start, stop, the number
   of its buffers, of its dims and of its imports, then its buffers' indices into the run's
   table (buffers, then constants, then outputs, then temporaries), its dims' indices into
   dims (bytes of int64: a shape-generic executable's run-time sizes) and the addresses of
   the library routines it imports, which the kernel reads in place. A negative stop -1 - k
   is the value dims[k]: the steps of a shape-generic executable's bindings range over
   run-time sizes, and one plan serves them all, each binding's ranges in its own dims
   (a copy of the plan per binding, its ranges written in, was a twentieth of a read at a
   new size). Every index is checked before any kernel runs. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef void (*kernel_fn)(void **, const int64_t *, int64_t, int64_t, void *const *);

/* Tables up to this many entries live on the stack; larger ones are allocated. */
#define STACK_TABLE 64

static Py_ssize_t data_pointer_offset = -1;

static PyObject *configure(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "configure(data_pointer_offset)");
        return NULL;
    }
    Py_ssize_t offset = PyLong_AsSsize_t(args[0]);
    if (offset == -1 && PyErr_Occurred()) return NULL;
    if (offset < (Py_ssize_t)sizeof(PyObject)) {
        PyErr_SetString(PyExc_ValueError, "the data pointer lies inside the object header");
        return NULL;
    }
    data_pointer_offset = offset;
    Py_RETURN_NONE;
}

static void add_objects(void **table, Py_ssize_t *n, PyObject *list) {
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        char *object = (char *)PyList_GET_ITEM(list, i);
        table[(*n)++] = *(void **)(object + data_pointer_offset);
    }
}

/* Whether the plan's words describe whole steps whose indices lie in a table of size n
   and in n_dims dims; the largest step's buffer and dims counts go to *widest. */
static int check_plan(const int64_t *words, Py_ssize_t count, Py_ssize_t n, Py_ssize_t n_dims, int64_t *widest) {
    Py_ssize_t at = 0;
    *widest = 0;
    while (at < count) {
        if (count - at < 6) return 0;
        int64_t buffers = words[at + 3], dims = words[at + 4], imports = words[at + 5];
        if (words[at + 2] < 0 && -(words[at + 2] + 1) >= n_dims) return 0;
        if (buffers < 0 || dims < 0 || imports < 0 || buffers > count - at - 6 || dims > count - at - 6 - buffers ||
            imports > count - at - 6 - buffers - dims)
            return 0;
        for (int64_t i = 0; i < buffers; i++)
            if (words[at + 6 + i] < 0 || words[at + 6 + i] >= n) return 0;
        for (int64_t i = 0; i < dims; i++)
            if (words[at + 6 + buffers + i] < 0 || words[at + 6 + buffers + i] >= n_dims) return 0;
        if (buffers > *widest) *widest = buffers;
        if (dims > *widest) *widest = dims;
        at += 6 + buffers + dims + imports;
    }
    return 1;
}

static PyObject *run(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 6 || !PyBytes_Check(args[0]) || !PyList_Check(args[1]) || !PyBytes_Check(args[2]) ||
        !PyList_Check(args[3]) || !PyList_Check(args[4]) || !PyBytes_Check(args[5])) {
        PyErr_SetString(PyExc_TypeError, "run(plan: bytes, buffers: list, constant_pointers: bytes, outputs: list, "
                                         "temporaries: list, dims: bytes)");
        return NULL;
    }
    if (data_pointer_offset < 0) {
        PyErr_SetString(PyExc_RuntimeError, "run before configure");
        return NULL;
    }
    PyObject *plan = args[0], *buffers = args[1], *constants = args[2], *outputs = args[3], *temporaries = args[4];
    Py_ssize_t n_constants = PyBytes_GET_SIZE(constants) / (Py_ssize_t)sizeof(void *);
    Py_ssize_t size = PyList_GET_SIZE(buffers) + n_constants + PyList_GET_SIZE(outputs) + PyList_GET_SIZE(temporaries);
    const int64_t *words = (const int64_t *)PyBytes_AS_STRING(plan);
    Py_ssize_t count = PyBytes_GET_SIZE(plan) / (Py_ssize_t)sizeof(int64_t);
    const int64_t *dims = (const int64_t *)PyBytes_AS_STRING(args[5]);
    Py_ssize_t n_dims = PyBytes_GET_SIZE(args[5]) / (Py_ssize_t)sizeof(int64_t);
    int64_t widest;
    if (!check_plan(words, count, size, n_dims, &widest)) {
        PyErr_SetString(PyExc_ValueError, "a plan whose steps do not fit its buffer table");
        return NULL;
    }
    void *on_stack[STACK_TABLE], *own_on_stack[STACK_TABLE];
    int64_t own_dims_on_stack[STACK_TABLE];
    void **table = size <= STACK_TABLE ? on_stack : PyMem_Malloc(size * sizeof(void *));
    void **own = widest <= STACK_TABLE ? own_on_stack : PyMem_Malloc(widest * sizeof(void *));
    int64_t *own_dims = widest <= STACK_TABLE ? own_dims_on_stack : PyMem_Malloc(widest * sizeof(int64_t));
    if (table == NULL || own == NULL || own_dims == NULL) {
        if (table != on_stack) PyMem_Free(table);
        if (own != own_on_stack) PyMem_Free(own);
        if (own_dims != own_dims_on_stack) PyMem_Free(own_dims);
        return PyErr_NoMemory();
    }
    Py_ssize_t n = 0;
    add_objects(table, &n, buffers);
    memcpy(table + n, PyBytes_AS_STRING(constants), n_constants * sizeof(void *));
    n += n_constants;
    add_objects(table, &n, outputs);
    add_objects(table, &n, temporaries);
    /* The lists, held by the caller, keep every buffer alive while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t at = 0; at < count;) {
        kernel_fn kernel = (kernel_fn)(intptr_t)words[at];
        int64_t start = words[at + 1], stop = words[at + 2], n_own = words[at + 3], n_own_dims = words[at + 4];
        int64_t n_imports = words[at + 5];
        if (stop < 0) stop = dims[-(stop + 1)];
        for (int64_t i = 0; i < n_own; i++) own[i] = table[words[at + 6 + i]];
        for (int64_t i = 0; i < n_own_dims; i++) own_dims[i] = dims[words[at + 6 + n_own + i]];
        kernel(own, own_dims, start, stop, (void *const *)(words + at + 6 + n_own + n_own_dims));
        at += 6 + n_own + n_own_dims + n_imports;
    }
    Py_END_ALLOW_THREADS
    if (table != on_stack) PyMem_Free(table);
    if (own != own_on_stack) PyMem_Free(own);
    if (own_dims != own_dims_on_stack) PyMem_Free(own_dims);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(data_pointer_offset): where an array object holds its data pointer."},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(plan, buffers, constant_pointers, outputs, temporaries, dims): call the plan's kernels in order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__entry(void) { return PyModule_Create(&module); }
