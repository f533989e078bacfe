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
   sizes(program, values, split_at) -> None | False | (dims, n_table, ranges, sized, nbytes)

   plan is bytes of int64 words, per step: the kernel's address, start, stop, the number
   of its buffers, of its dims and of its imports, then its buffers' indices into the run's
   table (buffers, then constants, then outputs, then temporaries), its dims' indices into
   dims (bytes of int64: a shape-generic executable's run-time sizes) and the addresses of
   the library routines it imports, which the kernel reads in place. A negative stop -1 - k
   is the value dims[k]: the steps of a shape-generic executable's bindings range over
   run-time sizes, and one plan serves them all, each binding's ranges in its own dims
   (a copy of the plan per binding, its ranges written in, was a twentieth of a read at a
   new size). Every index is checked before any kernel runs.

   sizes evaluates what a shape-generic executable's binding to run-time sizes needs
   (executable.py's ShapeGenericExecutable.runner: a loop's read at a new size makes one):
   program is bytes of int64 words, a header (the number of values, of derived sizes, of
   limits, of range entries, of sized buffers, and the bytes of the static buffers), then
   polynomials in the dims table (symbolic.encode's form: terms, each a coefficient, its
   number of symbols and their indices): each derived size (appended to the table after
   the values), each limited size and its limit, each sized step's extent and work, and per
   sized buffer its rank, item size and dims. The answer is None where a size is past its
   limit, False where a sized step is worth running in chunks (an extent above 1 and work
   at least split_at), else the dims table with each sized step's extent packed as int64,
   its length, the ranges, each sized buffer's dims and the bytes of all buffers. A value
   or a result past int64 raises OverflowError (the caller binds in Python's ints). Walking
   the polynomials in Python cost ~35 us a new size, and compiling them into Python code
   ~0.8 ms a template: a script's first run met ~20 templates bound too few times to repay
   that. */

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

/* The polynomial at words[*at] (symbolic.encode's form) in the first n entries of table,
   *at moved past it: 0, -1 for a malformed program (an error set), 1 past int64. */
static int polynomial(const int64_t *words, Py_ssize_t count, Py_ssize_t *at, const int64_t *table, Py_ssize_t n,
                      int64_t *value) {
    if (*at >= count || words[*at] < 0) goto malformed;
    int64_t terms = words[(*at)++], total = 0;
    for (int64_t t = 0; t < terms; t++) {
        if (count - *at < 2 || words[*at + 1] < 0 || words[*at + 1] > count - *at - 2) goto malformed;
        int64_t product = words[*at], factors = words[*at + 1];
        *at += 2;
        for (int64_t f = 0; f < factors; f++) {
            int64_t index = words[(*at)++];
            if (index < 0 || index >= n) goto malformed;
            if (__builtin_mul_overflow(product, table[index], &product)) return 1;
        }
        if (__builtin_add_overflow(total, product, &total)) return 1;
    }
    *value = total;
    return 0;
malformed:
    PyErr_SetString(PyExc_ValueError, "sizes: a malformed program");
    return -1;
}

enum { HEADER = 6, STACK_SIZES = 128 };

static PyObject *sizes(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyBytes_Check(args[0]) || !(PyList_Check(args[1]) || PyTuple_Check(args[1]))) {
        PyErr_SetString(PyExc_TypeError, "sizes(program: bytes, values: list | tuple, split_at: int)");
        return NULL;
    }
    const int64_t *words = (const int64_t *)PyBytes_AS_STRING(args[0]);
    Py_ssize_t count = PyBytes_GET_SIZE(args[0]) / (Py_ssize_t)sizeof(int64_t), at = HEADER;
    long long split_at = PyLong_AsLongLong(args[2]);
    if (split_at == -1 && PyErr_Occurred()) return NULL;
    PyObject *const *given = PySequence_Fast_ITEMS(args[1]);
    Py_ssize_t n_given = PySequence_Fast_GET_SIZE(args[1]);
    if (count < HEADER || words[0] != n_given || words[1] < 0 || words[2] < 0 || words[3] < 0 || words[3] % 2 ||
        words[4] < 0 || words[5] < 0 || words[1] > count || words[3] > count) {
        PyErr_SetString(PyExc_ValueError, "sizes: a program for other values, or malformed");
        return NULL;
    }
    Py_ssize_t n_table = n_given + words[1], n_limits = words[2], n_ranges = words[3], n_sized = words[4];
    int64_t nbytes = words[5];
    int64_t on_stack[STACK_SIZES];
    int64_t *table = n_table + n_ranges <= STACK_SIZES ? on_stack : PyMem_Malloc((n_table + n_ranges) * sizeof(int64_t));
    if (table == NULL) return PyErr_NoMemory();
    int64_t *ranges = table + n_table;
    PyObject *result = NULL, *packed = NULL, *range_tuple = NULL, *sized = NULL;
    int past = 0; /* 1: past int64 */
    for (Py_ssize_t i = 0; i < n_given; i++) {
        if (!PyLong_Check(given[i])) { /* an int calls no Python code that could change the list */
            PyErr_SetString(PyExc_TypeError, "sizes: the values must be ints");
            goto done;
        }
        table[i] = PyLong_AsLongLong(given[i]);
        if (table[i] == -1 && PyErr_Occurred()) goto done;
    }
    for (Py_ssize_t i = n_given; i < n_table; i++)
        if ((past = polynomial(words, count, &at, table, i, &table[i])) != 0) goto done;
    int within = 1;
    for (Py_ssize_t k = 0; k < n_limits; k++) {
        int64_t value;
        if ((past = polynomial(words, count, &at, table, n_table, &value)) != 0) goto done;
        if (at >= count) {
            past = -1;
            PyErr_SetString(PyExc_ValueError, "sizes: a malformed program");
            goto done;
        }
        if (value > words[at++]) within = 0;
    }
    if (!within) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    for (Py_ssize_t k = 0; k < n_ranges; k++)
        if ((past = polynomial(words, count, &at, table, n_table, &ranges[k])) != 0) goto done;
    for (Py_ssize_t k = 0; k < n_ranges; k += 2)
        if (ranges[k] > 1 && ranges[k + 1] >= split_at) {
            result = Py_NewRef(Py_False);
            goto done;
        }
    if ((sized = PyTuple_New(n_sized)) == NULL) goto done;
    for (Py_ssize_t b = 0; b < n_sized; b++) {
        if (count - at < 2 || words[at] < 0 || words[at] > count) {
            past = -1;
            PyErr_SetString(PyExc_ValueError, "sizes: a malformed program");
            goto done;
        }
        int64_t rank = words[at], bytes = words[at + 1];
        at += 2;
        PyObject *dims = PyTuple_New(rank);
        if (dims == NULL) goto done;
        PyTuple_SET_ITEM(sized, b, dims);
        for (int64_t d = 0; d < rank; d++) {
            int64_t dim;
            if ((past = polynomial(words, count, &at, table, n_table, &dim)) != 0) goto done;
            PyObject *item = PyLong_FromLongLong(dim);
            if (item == NULL) goto done;
            PyTuple_SET_ITEM(dims, d, item);
            if (__builtin_mul_overflow(bytes, dim, &bytes)) {
                past = 1;
                goto done;
            }
        }
        if (__builtin_add_overflow(nbytes, bytes, &nbytes)) {
            past = 1;
            goto done;
        }
    }
    if (at != count) {
        past = -1;
        PyErr_SetString(PyExc_ValueError, "sizes: a malformed program");
        goto done;
    }
    if ((packed = PyBytes_FromStringAndSize(NULL, (n_table + n_ranges / 2) * (Py_ssize_t)sizeof(int64_t))) == NULL)
        goto done;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(packed);
    memcpy(out, table, n_table * sizeof(int64_t));
    for (Py_ssize_t k = 0; k < n_ranges / 2; k++) out[n_table + k] = ranges[2 * k];
    if ((range_tuple = PyTuple_New(n_ranges)) == NULL) goto done;
    for (Py_ssize_t k = 0; k < n_ranges; k++) {
        PyObject *item = PyLong_FromLongLong(ranges[k]);
        if (item == NULL) goto done;
        PyTuple_SET_ITEM(range_tuple, k, item);
    }
    result = Py_BuildValue("(OnOOL)", packed, n_table, range_tuple, sized, (long long)nbytes);
done:
    if (past == 1) PyErr_SetString(PyExc_OverflowError, "sizes: a size past int64");
    Py_XDECREF(packed);
    Py_XDECREF(range_tuple);
    Py_XDECREF(sized);
    if (table != on_stack) PyMem_Free(table);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(data_pointer_offset): where an array object holds its data pointer."},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(plan, buffers, constant_pointers, outputs, temporaries, dims): call the plan's kernels in order."},
    {"sizes", (PyCFunction)(void (*)(void))sizes, METH_FASTCALL,
     "sizes(program, values, split_at): a binding's dims table, ranges, buffers' dims and bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__entry(void) { return PyModule_Create(&module); }
