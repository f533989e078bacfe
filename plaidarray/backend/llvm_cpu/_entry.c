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
   Prepared(sequence, plan, constant_pointers, dims, outputs, temporaries, slots, timed, keeps,
            generation_of, sized, empty) -> a callable run(buffers) -> list
   Chain(steps, constants, n_values, results, passes_through, timed, after, merge)
         -> a callable run(buffers) -> list
   AnySize(template, program, plan, constant_pointers, outputs, temporaries, slots, sized, empty,
           pooled_empty, timed, generation_of, split_work, n_table, smallest_pooled, check_above, runs)
         -> a callable any(symbols) -> None | a Bound, with run(buffers) -> list
   entry_runs(steps, outputs, temporaries, derived, limits, itemsizes, addresses, routines, n_values, split_at)
         -> None | (program, plan, sized_steps, sized_buffers, buffer_bytes, static_bytes, splitting)

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
   that.

   entry_runs makes, for n_values run-time sizes, the program sizes evaluates and the plan
   (the kernels' addresses given per step) of a shape-generic executable from its cache
   entry's metadata (cache_entry.py: the steps' buffers, ranges and dims, the outputs' and
   temporaries' dims with their item sizes given apart, the derived sizes and limits,
   each size as symbolic.encode writes it; per step the addresses of the routines it
   imports, given apart too), and where its sizes fall: the steps of sized
   ranges, per buffer of sized dims (group, index, rank, index among all buffers), each
   buffer's bytes (0 for a sized one) and their sum, and whether a step of static range is
   worth running in chunks (an extent above 1, work at least split_at): executable.py's
   ShapeGenericExecutable made these from the polynomials its load decoded, in Python, at
   each op kernel's first use. None where the entry is not of that form (a size not in that
   form, a static buffer's bytes past int64).

   Prepared is an executable's run made once for the runs after it (executable.py's
   ``prepared``): a cached read of a small graph spent ~1 us of its ~4 in the Python of
   the run (the executable's and its sequence's run methods, the buffers' allocators, the
   heat's timer) around this module's call of the kernels. It makes each output and
   temporary by calling its allocator (outputs, temporaries: tuples of callables of no
   argument; the temporaries of one run kept for the next where keeps is true), calls the
   kernels (the plan, constant pointers and dims table as run takes them; a runner's
   buffers of run-time sizes, None among the allocators, made by empty(dims, dtype) per
   entry (group, index, dims, dtype) of sized, group 0 the outputs, 1 the temporaries, so
   that preparing a runner makes no allocator per size), adds the seconds
   that took to timed.seconds (timed: None, or an object with a float ``seconds``), and
   returns the outputs, or where slots is a tuple, per result the output slots[i] (>= 0)
   or the parameter -1 - slots[i]. While the attribute ``generation`` of generation_of
   (executable.py's tiering module) is not what it was when prepared (full code has
   replaced first-tier code: other addresses), it runs sequence.run(buffers) instead, which
   reads the addresses anew, then takes the sequence's ``_plan`` and the generation.

   Chain is a run of several executables' runs in turn over one table of values
   (call_by_call.py's ``CallByCall``: a graph's op kernels, each on its runner's prepared
   run, where merging them into one executable costs ~50-150 us of Python a graph). The
   table holds the run's buffers, then the constants, then n_values values the steps make;
   steps is a tuple of (run, inputs, outputs, freed), run a callable of one list of
   buffers returning a list, inputs the table indices it is given, outputs where its
   results go, freed the values let go after it. Its results, per entry (value, dims) of
   results, are those values, each reshaped to dims where its shape differs, but a buffer
   passed through when passes_through. The seconds the run took are added to
   timed.seconds, as Prepared adds them. Its run number `after` (none where after <= 0)
   is merge(buffers) instead, which returns that run's results and a callable that runs
   it from then on (the merged executable's prepared run), or None to go on chaining: a
   chain costs ~0.5 us a call more than the merged executable's run, which is worth
   merging once a graph has run often enough to repay it.

   AnySize is a shape-generic executable's runs at sizes met for the first time
   (executable.py's ``any_size``): a loop's read at a new size spent ~15 us of Python making
   a runner, its baseline executable and its cache entry around ~3 us of work, which trace's
   read path (_graph.c) now calls without. Called with its symbols' values (a list of
   ints), it evaluates program as sizes does (split_work() giving split_at), and returns an
   object bound to those sizes (a Bound: call_by_call.py's calls of a graph met for the first
   time are bound so, untimed), or None where they need the runner's Python: past a limit,
   worth running in chunks, past int64, a dims table of other than n_table entries, or
   buffers of check_above bytes or more (checked for memory first). The bound object's
   run(buffers) makes the outputs and temporaries by their allocators (tuples, None for a
   buffer of run-time sizes: per entry (group, index, dtype) of sized, in the order of the
   sizes' buffers, empty(dims, dtype), or pooled_empty(dims, dtype, temporary) where the
   buffers take smallest_pooled bytes or more), runs the plan, adds the seconds that took
   to timed.seconds (and, while runs.first_tier holds kernels of first-tier code, the
   kernels' own seconds by runs.add, which asks for their full code once they are worth
   it) and returns the results as Prepared does (slots). Where the generation
   of code has moved on since (full code replaced first-tier code), the plan is first
   made again by template.plan_words(n_table). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>
#include <time.h>

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

typedef struct {
    PyObject_HEAD
    PyObject *sequence, *plan, *constants, *dims, *outputs, *temporaries, *slots, *timed, *generation_of, *spare,
        *sized, *empty;
    long generation;
    int keeps;
    vectorcallfunc vectorcall;
} Prepared;

static PyObject *str_generation, *str_seconds, *str_plan, *str_run_name;

/* Its object fields, each once: what the collector visits and what clearing drops. */
#define PREPARED_FIELDS(FIELD)                                                                                      \
    FIELD(sequence) FIELD(plan) FIELD(constants) FIELD(dims) FIELD(outputs) FIELD(temporaries) FIELD(slots)         \
    FIELD(timed) FIELD(generation_of) FIELD(spare) FIELD(sized) FIELD(empty)

static int prepared_traverse(Prepared *self, visitproc visit, void *arg) {
#define VISIT_FIELD(name) Py_VISIT(self->name);
    PREPARED_FIELDS(VISIT_FIELD)
#undef VISIT_FIELD
    return 0;
}

static int prepared_clear(Prepared *self) {
#define CLEAR_FIELD(name) Py_CLEAR(self->name);
    PREPARED_FIELDS(CLEAR_FIELD)
#undef CLEAR_FIELD
    return 0;
}

static void prepared_dealloc(Prepared *self) {
    PyObject_GC_UnTrack(self);
    prepared_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The current generation of code (generation_of.generation), or -1 with an error set. */
static long generation_now(PyObject *generation_of) {
    PyObject *value = PyObject_GetAttr(generation_of, str_generation);
    if (value == NULL) return -1;
    long now = PyLong_AsLong(value);
    Py_DECREF(value);
    return now;
}

/* A new list of the buffers that the allocators in the tuple `makers` make, None where an
   allocator is None (a buffer of run-time sizes, made by fill_sized). */
static PyObject *made(PyObject *makers) {
    Py_ssize_t n = PyTuple_GET_SIZE(makers);
    PyObject *list = PyList_New(n);
    if (list == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *maker = PyTuple_GET_ITEM(makers, i);
        PyObject *buffer = maker == Py_None ? Py_NewRef(Py_None) : PyObject_CallNoArgs(maker);
        if (buffer == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, buffer);
    }
    return list;
}

/* `buffer` (a reference stolen) placed at `index` of `outs` (`group` 0) or `temps` (1), the
   run's buffers of static sizes made already; 0, or -1 with an error set. */
static int put_sized(PyObject *outs, PyObject *temps, PyObject *group, PyObject *index, PyObject *buffer) {
    PyObject *into = PyLong_AsLong(group) ? temps : outs;
    Py_ssize_t at = PyLong_AsSsize_t(index);
    if (!PyErr_Occurred() && (at < 0 || at >= PyList_GET_SIZE(into)))
        PyErr_SetString(PyExc_IndexError, "a run's sized buffer past its buffers");
    if (PyErr_Occurred()) {
        Py_DECREF(buffer);
        return -1;
    }
    PyObject *old = PyList_GET_ITEM(into, at);
    PyList_SET_ITEM(into, at, buffer);
    Py_DECREF(old);
    return 0;
}

/* The buffers of run-time sizes: per entry (group, index, dims, dtype) of `sized`,
   empty(dims, dtype) at `index` of `outs` (group 0) or `temps` (group 1). 0, or -1 with an
   error set. */
static int fill_sized(Prepared *self, PyObject *outs, PyObject *temps) {
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self->sized); k++) {
        PyObject *entry = PyTuple_GET_ITEM(self->sized, k);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
            PyErr_SetString(PyExc_TypeError, "a prepared run's sized entry is (group, index, dims, dtype)");
            return -1;
        }
        PyObject *buffer = PyObject_CallFunctionObjArgs(self->empty, PyTuple_GET_ITEM(entry, 2),
                                                        PyTuple_GET_ITEM(entry, 3), NULL);
        if (buffer == NULL ||
            put_sized(outs, temps, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1), buffer))
            return -1;
    }
    return 0;
}

/* timed.seconds += seconds; 0, or -1 with an error set. */
static int add_seconds(PyObject *timed, double seconds) {
    PyObject *before = PyObject_GetAttr(timed, str_seconds);
    if (before == NULL) return -1;
    double total = PyFloat_AsDouble(before);
    Py_DECREF(before);
    if (total == -1.0 && PyErr_Occurred()) return -1;
    PyObject *after = PyFloat_FromDouble(total + seconds);
    if (after == NULL) return -1;
    int failed = PyObject_SetAttr(timed, str_seconds, after);
    Py_DECREF(after);
    return failed;
}

static double seconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* The sequence's own run (new code since prepared), its class's method (the instance's
   `run` may be a prepared run), timed as a prepared run is; then its plan of now is taken. */
static PyObject *rerun_in_python(Prepared *self, PyObject *buffers, long now) {
    double start = self->timed != Py_None ? seconds_now() : 0.0;
    PyObject *method = PyObject_GetAttr((PyObject *)Py_TYPE(self->sequence), str_run_name);
    if (method == NULL) return NULL;
    PyObject *outs = PyObject_CallFunctionObjArgs(method, self->sequence, buffers, NULL);
    Py_DECREF(method);
    if (outs == NULL) return NULL;
    if (self->timed != Py_None && add_seconds(self->timed, seconds_now() - start)) {
        Py_DECREF(outs);
        return NULL;
    }
    PyObject *plan = PyObject_GetAttr(self->sequence, str_plan);
    if (plan == NULL) {
        Py_DECREF(outs);
        return NULL;
    }
    if (PyBytes_Check(plan) && PyBytes_GET_SIZE(plan) > 0) {
        Py_SETREF(self->plan, plan);
        self->generation = now;
    } else {
        Py_DECREF(plan);
    }
    return outs;
}

/* A run's results from its outputs `outs` (a reference stolen) and its `buffers`: `outs`
   where slots is None, else per result the output slots[i] (>= 0) or the parameter
   -1 - slots[i]. A new reference, or NULL. */
static PyObject *slotted(PyObject *slots, PyObject *outs, PyObject *buffers) {
    if (slots == Py_None) return outs;
    Py_ssize_t n = PyTuple_GET_SIZE(slots);
    PyObject *results = PyList_New(n);
    if (results == NULL) {
        Py_DECREF(outs);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t slot = PyLong_AsSsize_t(PyTuple_GET_ITEM(slots, i));
        PyObject *from = slot >= 0 ? outs : buffers;
        Py_ssize_t at = slot >= 0 ? slot : -1 - slot;
        if (PyErr_Occurred() || at >= PyList_GET_SIZE(from)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "a run's result slot past its buffers");
            Py_DECREF(outs);
            Py_DECREF(results);
            return NULL;
        }
        PyList_SET_ITEM(results, i, Py_NewRef(PyList_GET_ITEM(from, at)));
    }
    Py_DECREF(outs);
    return results;
}

static PyObject *prepared_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Prepared *self = (Prepared *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "a prepared run takes one list of buffers");
        return NULL;
    }
    PyObject *buffers = args[0];
    long now = generation_now(self->generation_of);
    if (now == -1 && PyErr_Occurred()) return NULL;
    if (now != self->generation) return rerun_in_python(self, buffers, now);
    PyObject *outs = made(self->outputs);
    if (outs == NULL) return NULL;
    PyObject *temps = NULL;
    if (self->spare != NULL) {
        temps = self->spare; /* taken: a run on another thread meanwhile makes its own */
        self->spare = NULL;
    } else {
        temps = made(self->temporaries);
        if (temps == NULL) {
            Py_DECREF(outs);
            return NULL;
        }
    }
    if (PyTuple_GET_SIZE(self->sized) && fill_sized(self, outs, temps)) {
        Py_DECREF(outs);
        Py_DECREF(temps);
        return NULL;
    }
    double start = self->timed != Py_None ? seconds_now() : 0.0;
    PyObject *plan = Py_NewRef(self->plan); /* held while the kernels run without the GIL: another thread's
                                               rerun_in_python may take a new plan meanwhile */
    PyObject *run_args[] = {plan, buffers, self->constants, outs, temps, self->dims};
    PyObject *done = run(NULL, run_args, 6);
    Py_DECREF(plan);
    if (done == NULL || (self->timed != Py_None && add_seconds(self->timed, seconds_now() - start))) {
        Py_XDECREF(done);
        Py_DECREF(outs);
        Py_DECREF(temps);
        return NULL;
    }
    Py_DECREF(done);
    if (self->keeps && self->spare == NULL)
        self->spare = temps;
    else
        Py_DECREF(temps);
    return slotted(self->slots, outs, buffers);
}

static PyObject *prepared_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *sequence, *plan, *constants, *dims, *outputs, *temporaries, *slots, *timed, *generation_of, *sized,
        *empty;
    int keeps;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Prepared takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!OOpOO!O:Prepared", &sequence, &PyBytes_Type, &plan, &PyBytes_Type,
                          &constants, &PyBytes_Type, &dims, &PyTuple_Type, &outputs, &PyTuple_Type, &temporaries, &slots,
                          &timed, &keeps, &generation_of, &PyTuple_Type, &sized, &empty))
        return NULL;
    if (PyTuple_GET_SIZE(sized) && (keeps || !PyCallable_Check(empty))) {
        PyErr_SetString(PyExc_TypeError, "Prepared: sized buffers need a callable empty and keep no temporaries");
        return NULL;
    }
    if (slots != Py_None && !PyTuple_Check(slots)) {
        PyErr_SetString(PyExc_TypeError, "Prepared: slots is None or a tuple");
        return NULL;
    }
    if (data_pointer_offset < 0) {
        PyErr_SetString(PyExc_RuntimeError, "Prepared before configure");
        return NULL;
    }
    Prepared *self = (Prepared *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->sequence = Py_NewRef(sequence);
    self->plan = Py_NewRef(plan);
    self->constants = Py_NewRef(constants);
    self->dims = Py_NewRef(dims);
    self->outputs = Py_NewRef(outputs);
    self->temporaries = Py_NewRef(temporaries);
    self->slots = Py_NewRef(slots);
    self->timed = Py_NewRef(timed);
    self->generation_of = Py_NewRef(generation_of);
    self->sized = Py_NewRef(sized);
    self->empty = Py_NewRef(empty);
    self->spare = NULL;
    self->keeps = keeps;
    self->vectorcall = prepared_call;
    self->generation = generation_now(self->generation_of);
    if (self->generation == -1 && PyErr_Occurred()) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyMemberDef prepared_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Prepared, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject PreparedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "plaidarray.backend.llvm_cpu._entry.Prepared",
    .tp_basicsize = sizeof(Prepared),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "An executable's run prepared for the runs after it (the module's docstring).",
    .tp_new = prepared_new,
    .tp_dealloc = (destructor)prepared_dealloc,
    .tp_traverse = (traverseproc)prepared_traverse,
    .tp_clear = (inquiry)prepared_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Prepared, vectorcall),
    .tp_members = prepared_members,
};


typedef struct {
    PyObject_HEAD
    PyObject *steps, *constants, *results, *timed, *merge, *instead;
    Py_ssize_t n_values, runs, after;
    int passes_through;
    vectorcallfunc vectorcall;
} Chain;

static PyObject *str_shape, *str_reshape;

#define CHAIN_FIELDS(FIELD) FIELD(steps) FIELD(constants) FIELD(results) FIELD(timed) FIELD(merge) FIELD(instead)

static int chain_traverse(Chain *self, visitproc visit, void *arg) {
#define VISIT_FIELD(name) Py_VISIT(self->name);
    CHAIN_FIELDS(VISIT_FIELD)
#undef VISIT_FIELD
    return 0;
}

static int chain_clear(Chain *self) {
#define CLEAR_FIELD(name) Py_CLEAR(self->name);
    CHAIN_FIELDS(CLEAR_FIELD)
#undef CLEAR_FIELD
    return 0;
}

static void chain_dealloc(Chain *self) {
    PyObject_GC_UnTrack(self);
    chain_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The table index at `i` of the int tuple `indices`, checked against n; -1 with an error set. */
static Py_ssize_t table_index(PyObject *indices, Py_ssize_t i, Py_ssize_t n) {
    Py_ssize_t at = PyLong_AsSsize_t(PyTuple_GET_ITEM(indices, i));
    if (at == -1 && PyErr_Occurred()) return -1;
    if (at < 0 || at >= n) {
        PyErr_SetString(PyExc_IndexError, "a chain's value index past its table");
        return -1;
    }
    return at;
}

/* Runs one step (checked by chain_new) over `table` (n entries): its run on its inputs, its
   results stored at its outputs, its freed values let go. 0, or -1 with an error set. */
static int chain_step(PyObject *step, PyObject **table, Py_ssize_t n) {
    PyObject *inputs = PyTuple_GET_ITEM(step, 1), *outputs = PyTuple_GET_ITEM(step, 2),
             *freed = PyTuple_GET_ITEM(step, 3);
    PyObject *given = PyList_New(PyTuple_GET_SIZE(inputs));
    if (given == NULL) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        Py_ssize_t at = table_index(inputs, i, n);
        if (at < 0 || table[at] == NULL) {
            if (at >= 0) PyErr_SetString(PyExc_RuntimeError, "a chain's step reads a value not made");
            Py_DECREF(given);
            return -1;
        }
        PyList_SET_ITEM(given, i, Py_NewRef(table[at]));
    }
    PyObject *outs = PyObject_Vectorcall(PyTuple_GET_ITEM(step, 0), &given, 1, NULL);
    Py_DECREF(given);
    if (outs == NULL) return -1;
    if (!PyList_Check(outs) || PyList_GET_SIZE(outs) < PyTuple_GET_SIZE(outputs)) {
        PyErr_SetString(PyExc_TypeError, "a chain's step returned too few results");
        Py_DECREF(outs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outputs); i++) {
        Py_ssize_t at = table_index(outputs, i, n);
        if (at < 0) {
            Py_DECREF(outs);
            return -1;
        }
        Py_XSETREF(table[at], Py_NewRef(PyList_GET_ITEM(outs, i)));
    }
    Py_DECREF(outs);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(freed); i++) {
        Py_ssize_t at = table_index(freed, i, n);
        if (at < 0) return -1;
        Py_CLEAR(table[at]);
    }
    return 0;
}

/* The result of entry (value, dims): the value, reshaped to dims where its shape differs,
   but a buffer passed through as it is (passes_through). A new reference, or NULL. */
static PyObject *chain_result(Chain *self, PyObject *entry, PyObject **table, Py_ssize_t n, PyObject *buffers) {
    Py_ssize_t at = table_index(entry, 0, n);
    if (at < 0) return NULL;
    PyObject *out = table[at];
    if (out == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "a chain's result is a value not made");
        return NULL;
    }
    if (self->passes_through)
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(buffers); i++)
            if (PyList_GET_ITEM(buffers, i) == out) return Py_NewRef(out);
    PyObject *shape = PyObject_GetAttr(out, str_shape);
    if (shape == NULL) return NULL;
    int same = PyObject_RichCompareBool(shape, PyTuple_GET_ITEM(entry, 1), Py_EQ);
    Py_DECREF(shape);
    if (same < 0) return NULL;
    if (same) return Py_NewRef(out);
    return PyObject_CallMethodOneArg(out, str_reshape, PyTuple_GET_ITEM(entry, 1));
}

/* Its run number `after`: merge(buffers)'s results, its callable kept as what runs it from
   then on (the module's docstring). */
static PyObject *chain_merged(Chain *self, PyObject *buffers) {
    self->after = 0; /* once: a run on another thread meanwhile goes on chaining */
    double start = self->timed != Py_None ? seconds_now() : 0.0;
    PyObject *pair = PyObject_CallOneArg(self->merge, buffers);
    if (pair == NULL) return NULL;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
        PyErr_SetString(PyExc_TypeError, "a chain's merge returns (results, run or None)");
        Py_DECREF(pair);
        return NULL;
    }
    PyObject *results = Py_NewRef(PyTuple_GET_ITEM(pair, 0)), *instead = PyTuple_GET_ITEM(pair, 1);
    if (instead != Py_None) Py_XSETREF(self->instead, Py_NewRef(instead));
    Py_DECREF(pair);
    if (self->timed != Py_None && add_seconds(self->timed, seconds_now() - start)) Py_CLEAR(results);
    return results;
}

static PyObject *chain_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Chain *self = (Chain *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "a chain's run takes one list of buffers");
        return NULL;
    }
    PyObject *buffers = args[0];
    if (self->instead != NULL) return PyObject_Vectorcall(self->instead, args, 1, NULL);
    if (self->after > 0 && ++self->runs >= self->after) return chain_merged(self, buffers);
    Py_ssize_t n_buffers = PyList_GET_SIZE(buffers), n_constants = PyTuple_GET_SIZE(self->constants);
    Py_ssize_t n = n_buffers + n_constants + self->n_values;
    PyObject *on_stack[STACK_TABLE];
    PyObject **table = n <= STACK_TABLE ? on_stack : PyMem_Calloc((size_t)n, sizeof(PyObject *));
    if (table == NULL) return PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++)
        table[i] = i < n_buffers ? Py_NewRef(PyList_GET_ITEM(buffers, i))
                   : i < n_buffers + n_constants ? Py_NewRef(PyTuple_GET_ITEM(self->constants, i - n_buffers))
                                                 : NULL;
    double start = self->timed != Py_None ? seconds_now() : 0.0;
    PyObject *results = NULL;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(self->steps); k++)
        if (chain_step(PyTuple_GET_ITEM(self->steps, k), table, n)) goto done;
    Py_ssize_t n_results = PyTuple_GET_SIZE(self->results);
    if ((results = PyList_New(n_results)) == NULL) goto done;
    for (Py_ssize_t i = 0; i < n_results; i++) {
        PyObject *result = chain_result(self, PyTuple_GET_ITEM(self->results, i), table, n, buffers);
        if (result == NULL) {
            Py_CLEAR(results);
            goto done;
        }
        PyList_SET_ITEM(results, i, result);
    }
    if (self->timed != Py_None && add_seconds(self->timed, seconds_now() - start)) Py_CLEAR(results);
done:
    for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(table[i]);
    if (table != on_stack) PyMem_Free(table);
    return results;
}

static PyObject *chain_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *steps, *constants, *results, *timed, *merge;
    Py_ssize_t n_values, after;
    int passes_through;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Chain takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!nO!pOnO:Chain", &PyTuple_Type, &steps, &PyTuple_Type, &constants, &n_values,
                          &PyTuple_Type, &results, &passes_through, &timed, &after, &merge))
        return NULL;
    if (n_values < 0) {
        PyErr_SetString(PyExc_ValueError, "Chain: n_values is negative");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(steps); k++) { /* checked once, not at each run */
        PyObject *step = PyTuple_GET_ITEM(steps, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) != 4 || !PyCallable_Check(PyTuple_GET_ITEM(step, 0)) ||
            !PyTuple_Check(PyTuple_GET_ITEM(step, 1)) || !PyTuple_Check(PyTuple_GET_ITEM(step, 2)) ||
            !PyTuple_Check(PyTuple_GET_ITEM(step, 3))) {
            PyErr_SetString(PyExc_TypeError, "a chain's step is (run, inputs, outputs, freed), its indices tuples");
            return NULL;
        }
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(results); i++) {
        PyObject *entry = PyTuple_GET_ITEM(results, i);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
            PyErr_SetString(PyExc_TypeError, "a chain's result is (value, dims)");
            return NULL;
        }
    }
    Chain *self = (Chain *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->steps = Py_NewRef(steps);
    self->constants = Py_NewRef(constants);
    self->results = Py_NewRef(results);
    self->timed = Py_NewRef(timed);
    self->merge = Py_NewRef(merge);
    self->instead = NULL;
    self->n_values = n_values;
    self->runs = 0;
    self->after = after;
    self->passes_through = passes_through;
    self->vectorcall = chain_call;
    return (PyObject *)self;
}

static PyMemberDef chain_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Chain, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject ChainType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "plaidarray.backend.llvm_cpu._entry.Chain",
    .tp_basicsize = sizeof(Chain),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Several executables' runs in turn over one table of values (the module's docstring).",
    .tp_new = chain_new,
    .tp_dealloc = (destructor)chain_dealloc,
    .tp_traverse = (traverseproc)chain_traverse,
    .tp_clear = (inquiry)chain_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Chain, vectorcall),
    .tp_members = chain_members,
};


typedef struct {
    PyObject_HEAD
    PyObject *template, *program, *plan, *constants, *outputs, *temporaries, *slots, *sized, *empty, *pooled_empty,
        *timed, *generation_of, *split_work, *runs;
    long generation;
    Py_ssize_t n_table;
    long long smallest_pooled, check_above;
    vectorcallfunc vectorcall;
} AnySize;

typedef struct {
    PyObject_HEAD
    AnySize *of;
    PyObject *dims, *sized;
    long long nbytes;
} Bound;

static PyTypeObject BoundType;
static PyObject *str_plan_words, *str_first_tier, *str_add;

#define ANY_SIZE_FIELDS(FIELD)                                                                                      \
    FIELD(template) FIELD(program) FIELD(plan) FIELD(constants) FIELD(outputs) FIELD(temporaries) FIELD(slots)     \
    FIELD(sized) FIELD(empty) FIELD(pooled_empty) FIELD(timed) FIELD(generation_of) FIELD(split_work) FIELD(runs)

static int any_size_traverse(AnySize *self, visitproc visit, void *arg) {
#define VISIT_FIELD(name) Py_VISIT(self->name);
    ANY_SIZE_FIELDS(VISIT_FIELD)
#undef VISIT_FIELD
    return 0;
}

static int any_size_clear(AnySize *self) {
#define CLEAR_FIELD(name) Py_CLEAR(self->name);
    ANY_SIZE_FIELDS(CLEAR_FIELD)
#undef CLEAR_FIELD
    return 0;
}

static void any_size_dealloc(AnySize *self) {
    PyObject_GC_UnTrack(self);
    any_size_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Its run at the sizes of `symbols` (a list of ints), a Bound; None where they need the
   runner's Python (the module's docstring). */
static PyObject *any_size_call(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    AnySize *self = (AnySize *)callable;
    if (PyVectorcall_NARGS(nargsf) != 1 || kwnames != NULL || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "AnySize takes one list of its symbols' values");
        return NULL;
    }
    PyObject *split_at = PyObject_CallNoArgs(self->split_work);
    if (split_at == NULL) return NULL;
    PyObject *sizes_args[] = {self->program, args[0], split_at};
    PyObject *made_sizes = sizes(NULL, sizes_args, 3); /* (dims, n_table, ranges, sized, nbytes), None or False */
    Py_DECREF(split_at);
    if (made_sizes == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return NULL;
        PyErr_Clear(); /* past int64: the runner binds in Python's ints */
        Py_RETURN_NONE;
    }
    if (!PyTuple_Check(made_sizes)) {
        Py_DECREF(made_sizes);
        Py_RETURN_NONE;
    }
    Py_ssize_t n_table = PyLong_AsSsize_t(PyTuple_GET_ITEM(made_sizes, 1));
    long long nbytes = PyLong_AsLongLong(PyTuple_GET_ITEM(made_sizes, 4));
    PyObject *sized = PyTuple_GET_ITEM(made_sizes, 3);
    if (PyErr_Occurred()) {
        Py_DECREF(made_sizes);
        return NULL;
    }
    if (n_table != self->n_table || nbytes >= self->check_above || PyTuple_GET_SIZE(sized) != PyTuple_GET_SIZE(self->sized)) {
        Py_DECREF(made_sizes);
        Py_RETURN_NONE;
    }
    Bound *bound = PyObject_New(Bound, &BoundType);
    if (bound == NULL) {
        Py_DECREF(made_sizes);
        return NULL;
    }
    bound->of = (AnySize *)Py_NewRef(self);
    bound->dims = Py_NewRef(PyTuple_GET_ITEM(made_sizes, 0));
    bound->sized = Py_NewRef(sized);
    bound->nbytes = nbytes;
    Py_DECREF(made_sizes);
    return (PyObject *)bound;
}

static PyObject *any_size_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *template, *program, *plan, *constants, *outputs, *temporaries, *slots, *sized, *empty, *pooled_empty,
        *timed, *generation_of, *split_work, *runs;
    Py_ssize_t n_table;
    long long smallest_pooled, check_above;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "AnySize takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "OO!O!O!O!O!OO!OOOOOnLLO:AnySize", &template, &PyBytes_Type, &program, &PyBytes_Type,
                          &plan, &PyBytes_Type, &constants, &PyTuple_Type, &outputs, &PyTuple_Type, &temporaries, &slots,
                          &PyTuple_Type, &sized, &empty, &pooled_empty, &timed, &generation_of, &split_work, &n_table,
                          &smallest_pooled, &check_above, &runs))
        return NULL;
    if (slots != Py_None && !PyTuple_Check(slots)) {
        PyErr_SetString(PyExc_TypeError, "AnySize: slots is None or a tuple");
        return NULL;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(sized); k++) { /* checked once, not at each run */
        PyObject *entry = PyTuple_GET_ITEM(sized, k);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 3 || !PyLong_Check(PyTuple_GET_ITEM(entry, 0)) ||
            !PyLong_Check(PyTuple_GET_ITEM(entry, 1))) {
            PyErr_SetString(PyExc_TypeError, "AnySize: a sized entry is (group, index, dtype)");
            return NULL;
        }
    }
    if (!PyCallable_Check(empty) || !PyCallable_Check(pooled_empty) || !PyCallable_Check(split_work)) {
        PyErr_SetString(PyExc_TypeError, "AnySize: empty, pooled_empty and split_work are callables");
        return NULL;
    }
    if (data_pointer_offset < 0) {
        PyErr_SetString(PyExc_RuntimeError, "AnySize before configure");
        return NULL;
    }
    AnySize *self = (AnySize *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->template = Py_NewRef(template);
    self->program = Py_NewRef(program);
    self->plan = Py_NewRef(plan);
    self->constants = Py_NewRef(constants);
    self->outputs = Py_NewRef(outputs);
    self->temporaries = Py_NewRef(temporaries);
    self->slots = Py_NewRef(slots);
    self->sized = Py_NewRef(sized);
    self->empty = Py_NewRef(empty);
    self->pooled_empty = Py_NewRef(pooled_empty);
    self->timed = Py_NewRef(timed);
    self->generation_of = Py_NewRef(generation_of);
    self->split_work = Py_NewRef(split_work);
    self->runs = Py_NewRef(runs);
    self->n_table = n_table;
    self->smallest_pooled = smallest_pooled;
    self->check_above = check_above;
    self->vectorcall = any_size_call;
    self->generation = generation_now(generation_of);
    if (self->generation == -1 && PyErr_Occurred()) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyMemberDef any_size_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(AnySize, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject AnySizeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "plaidarray.backend.llvm_cpu._entry.AnySize",
    .tp_basicsize = sizeof(AnySize),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A shape-generic executable's runs at any sizes (the module's docstring).",
    .tp_new = any_size_new,
    .tp_dealloc = (destructor)any_size_dealloc,
    .tp_traverse = (traverseproc)any_size_traverse,
    .tp_clear = (inquiry)any_size_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(AnySize, vectorcall),
    .tp_members = any_size_members,
};

/* Whether the attribute `name` of `obj` is true: 1, 0, or -1 with an error set. */
static int attr_truth(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

static void bound_dealloc(Bound *self) {
    Py_XDECREF(self->of);
    Py_XDECREF(self->dims);
    Py_XDECREF(self->sized);
    PyObject_Free(self);
}

/* The buffers of run-time sizes of a Bound's run, made into `outs` and `temps` (the module's
   docstring); 0, or -1 with an error set. */
static int bound_sized(Bound *self, PyObject *outs, PyObject *temps) {
    AnySize *of = self->of;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(of->sized); k++) {
        PyObject *entry = PyTuple_GET_ITEM(of->sized, k), *dims = PyTuple_GET_ITEM(self->sized, k);
        PyObject *group = PyTuple_GET_ITEM(entry, 0), *dtype = PyTuple_GET_ITEM(entry, 2);
        PyObject *buffer = self->nbytes < of->smallest_pooled
                               ? PyObject_CallFunctionObjArgs(of->empty, dims, dtype, NULL)
                               : PyObject_CallFunctionObjArgs(of->pooled_empty, dims, dtype,
                                                              PyObject_IsTrue(group) ? Py_True : Py_False, NULL);
        if (buffer == NULL || put_sized(outs, temps, group, PyTuple_GET_ITEM(entry, 1), buffer)) return -1;
    }
    return 0;
}

static PyObject *bound_run(Bound *self, PyObject *buffers) {
    AnySize *of = self->of;
    if (!PyList_Check(buffers)) {
        PyErr_SetString(PyExc_TypeError, "a bound run takes one list of buffers");
        return NULL;
    }
    long now = generation_now(of->generation_of);
    if (now == -1 && PyErr_Occurred()) return NULL;
    if (now != of->generation) { /* full code replaced first-tier code since: the addresses of now */
        PyObject *n_table = PyLong_FromSsize_t(of->n_table);
        PyObject *plan = n_table == NULL ? NULL : PyObject_CallMethodOneArg(of->template, str_plan_words, n_table);
        Py_XDECREF(n_table);
        if (plan == NULL) return NULL;
        if (!PyBytes_Check(plan)) {
            PyErr_SetString(PyExc_TypeError, "AnySize: plan_words returned no bytes");
            Py_DECREF(plan);
            return NULL;
        }
        Py_SETREF(of->plan, plan);
        of->generation = now;
    }
    double start = of->timed != Py_None ? seconds_now() : 0.0;
    PyObject *outs = made(of->outputs);
    PyObject *temps = outs == NULL ? NULL : made(of->temporaries);
    if (temps == NULL || bound_sized(self, outs, temps)) {
        Py_XDECREF(outs);
        Py_XDECREF(temps);
        return NULL;
    }
    int first_tier = attr_truth(of->runs, str_first_tier); /* its kernels' runs timed for their upgrade */
    if (first_tier < 0) {
        Py_DECREF(outs);
        Py_DECREF(temps);
        return NULL;
    }
    PyObject *plan = Py_NewRef(of->plan); /* held while the kernels run without the GIL */
    PyObject *run_args[] = {plan, buffers, of->constants, outs, temps, self->dims};
    double kernels_start = first_tier ? seconds_now() : 0.0;
    PyObject *done = run(NULL, run_args, 6);
    Py_DECREF(plan);
    Py_DECREF(temps);
    PyObject *added = NULL;
    if (done != NULL && first_tier) {
        PyObject *seconds = PyFloat_FromDouble(seconds_now() - kernels_start);
        added = seconds == NULL ? NULL : PyObject_CallMethodOneArg(of->runs, str_add, seconds);
        Py_XDECREF(seconds);
    }
    if (done == NULL || (first_tier && added == NULL) ||
        (of->timed != Py_None && add_seconds(of->timed, seconds_now() - start))) {
        Py_XDECREF(done);
        Py_XDECREF(added);
        Py_DECREF(outs);
        return NULL;
    }
    Py_XDECREF(added);
    Py_DECREF(done);
    return slotted(of->slots, outs, buffers);
}

static PyMethodDef bound_methods[] = {
    {"run", (PyCFunction)bound_run, METH_O, "run(buffers) -> its results: the run at the sizes it is bound to."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "plaidarray.backend.llvm_cpu._entry.Bound",
    .tp_basicsize = sizeof(Bound),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An AnySize's run bound to sizes (the module's docstring).",
    .tp_dealloc = (destructor)bound_dealloc,
    .tp_methods = bound_methods,
};

/* entry_runs: what a shape-generic executable's runs at any size read (executable.py's
   ``_sizes_program``, ``plan_words`` and ``_layout``), made from its cache entry's metadata
   as cache_entry.py stores it (sizes in symbolic.encode's form), not from the polynomials
   its loading decoded them into: each op kernel's first use in a process walked them in
   Python (~35 us in a loop, ~80 among a script's other work). */

typedef struct {
    int64_t *words;
    Py_ssize_t count, capacity;
} Words;

static int words_add(Words *w, int64_t value) {
    if (w->count == w->capacity) {
        Py_ssize_t capacity = w->capacity ? 2 * w->capacity : 64;
        int64_t *grown = PyMem_Realloc(w->words, (size_t)capacity * sizeof(int64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->words = grown;
        w->capacity = capacity;
    }
    w->words[w->count++] = value;
    return 0;
}

/* The int64 of item i of a list; -1 where it is not an int (an exception set where it is past int64). */
static int item_int(PyObject *list, Py_ssize_t i, int64_t *value) {
    PyObject *item = PyList_GET_ITEM(list, i);
    if (!PyLong_Check(item)) return -1;
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) return -1;
    *value = v;
    return 0;
}

/* Appends the list ``encoded`` (a size as symbolic.encode writes it) to w, checking its form;
   *number is its value where it has no symbol, else *sized is set. Returns -1 where it
   is not of that form (no exception: the caller answers None). */
static int add_size(Words *w, PyObject *encoded, int64_t *number, int *sized) {
    if (!PyList_Check(encoded)) return -1;
    Py_ssize_t n = PyList_GET_SIZE(encoded), at = 1;
    int64_t terms, value = 0;
    if (n < 1 || item_int(encoded, 0, &terms) < 0 || terms < 0) return -1;
    int has_symbol = 0;
    for (int64_t t = 0; t < terms; t++) {
        int64_t coefficient, factors;
        if (n - at < 2 || item_int(encoded, at, &coefficient) < 0 || item_int(encoded, at + 1, &factors) < 0 ||
            factors < 0 || factors > n - at - 2)
            return -1;
        for (int64_t f = 0; f < factors; f++) {
            int64_t index;
            if (item_int(encoded, at + 2 + f, &index) < 0 || index < 0) return -1;
        }
        if (factors) has_symbol = 1;
        else value = coefficient;
        at += 2 + factors;
    }
    if (at != n || (has_symbol ? 0 : terms > 1)) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t word = 0;
        item_int(encoded, i, &word);
        if (words_add(w, word) < 0) return -2;
    }
    if (has_symbol) *sized = 1;
    else *number = value;
    return 0;
}

/* Item i of a list where it is a list, else NULL. */
static PyObject *list_item(PyObject *list, Py_ssize_t i) {
    PyObject *item = PyList_GET_ITEM(list, i);
    return PyList_Check(item) ? item : NULL;
}

static PyObject *entry_runs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 10) {
        PyErr_SetString(PyExc_TypeError, "entry_runs(steps, outputs, temporaries, derived, limits, itemsizes, "
                                         "addresses, routines, n_values, split_at)");
        return NULL;
    }
    PyObject *steps = args[0], *groups[2] = {args[1], args[2]}, *derived = args[3], *limits = args[4];
    PyObject *itemsizes = args[5], *addresses = args[6], *routines = args[7];
    long long n_values = PyLong_AsLongLong(args[8]), split_at = PyLong_AsLongLong(args[9]);
    if ((n_values == -1 || split_at == -1) && PyErr_Occurred()) return NULL;
    if (!PyList_Check(steps) || !PyList_Check(groups[0]) || !PyList_Check(groups[1]) || !PyList_Check(derived) ||
        !PyList_Check(limits) || !PyList_Check(itemsizes) || !PyList_Check(addresses) || !PyList_Check(routines) ||
        PyList_GET_SIZE(addresses) != PyList_GET_SIZE(steps) || PyList_GET_SIZE(routines) != PyList_GET_SIZE(steps) ||
        PyList_GET_SIZE(itemsizes) != PyList_GET_SIZE(groups[0]) + PyList_GET_SIZE(groups[1]))
        Py_RETURN_NONE;
    Words head = {0}, body = {0}, plan = {0}, steps_sized = {0}, buffers = {0};
    PyObject *result = NULL, *sized_steps = NULL, *sized_buffers = NULL, *buffer_bytes = NULL;
    int status = -1; /* -1: not of the form (None); -2: an exception */
    int64_t n_table = n_values + PyList_GET_SIZE(derived), static_bytes = 0, number;
    int splitting = 0, sized;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(derived); i++) {
        sized = 0;
        if ((status = add_size(&body, PyList_GET_ITEM(derived, i), &number, &sized)) < 0) goto done;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(limits); i++) {
        PyObject *limit = list_item(limits, i);
        int64_t bound;
        status = -1;
        if (limit == NULL || PyList_GET_SIZE(limit) != 2 || item_int(limit, 1, &bound) < 0) goto done;
        sized = 0;
        if ((status = add_size(&body, PyList_GET_ITEM(limit, 0), &number, &sized)) < 0) goto done;
        if (words_add(&body, bound) < 0) goto failed;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(steps); k++) {
        PyObject *step = list_item(steps, k), *segment, *step_buffers, *dims, *step_routines;
        int64_t address, extent = 0, work = 0;
        status = -1;
        if (step == NULL || PyList_GET_SIZE(step) != 5 || (segment = list_item(step, 2)) == NULL ||
            PyList_GET_SIZE(segment) != 3 || (step_buffers = list_item(step, 1)) == NULL ||
            (dims = list_item(step, 3)) == NULL || (step_routines = list_item(routines, k)) == NULL ||
            item_int(addresses, k, &address) < 0)
            goto done;
        Py_ssize_t mark = body.count;
        int sized_extent = 0, sized_work = 0;
        if ((status = add_size(&body, PyList_GET_ITEM(segment, 0), &extent, &sized_extent)) < 0 ||
            (status = add_size(&body, PyList_GET_ITEM(segment, 1), &work, &sized_work)) < 0)
            goto done;
        int64_t stop = extent;
        if (sized_extent || sized_work) {
            stop = -1 - (n_table + steps_sized.count);
            if (words_add(&steps_sized, k) < 0) goto failed;
        } else {
            body.count = mark; /* a static step's range is in its plan, not the program */
            if (extent > 1 && work >= split_at) splitting = 1;
        }
        int64_t head_words[6] = {address, 0, stop, PyList_GET_SIZE(step_buffers), PyList_GET_SIZE(dims),
                                 PyList_GET_SIZE(step_routines)};
        for (int w = 0; w < 6; w++)
            if (words_add(&plan, head_words[w]) < 0) goto failed;
        for (int part = 0; part < 3; part++) {
            PyObject *indices = part == 2 ? step_routines : part ? dims : step_buffers;
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(indices); i++) {
                int64_t index;
                status = -1;
                if (item_int(indices, i, &index) < 0) goto done;
                if (words_add(&plan, index) < 0) goto failed;
            }
        }
    }
    Py_ssize_t n_buffers = 0, outputs = PyList_GET_SIZE(groups[0]);
    buffer_bytes = PyList_New(0);
    if (buffer_bytes == NULL) goto failed;
    for (int group = 0; group < 2; group++) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(groups[group]); i++, n_buffers++) {
            PyObject *shape = list_item(groups[group], i), *shape_dims;
            int64_t itemsize, nbytes = 0;
            status = -1;
            if (shape == NULL || PyList_GET_SIZE(shape) != 2 || (shape_dims = list_item(shape, 0)) == NULL ||
                item_int(itemsizes, n_buffers, &itemsize) < 0 || itemsize < 0)
                goto done;
            Py_ssize_t mark = buffers.count, rank = PyList_GET_SIZE(shape_dims);
            int any_sized = 0;
            if (words_add(&buffers, rank) < 0 || words_add(&buffers, itemsize) < 0) goto failed;
            nbytes = itemsize;
            for (Py_ssize_t d = 0; d < rank; d++) {
                int dim_sized = 0;
                int64_t dim = 0;
                if ((status = add_size(&buffers, PyList_GET_ITEM(shape_dims, d), &dim, &dim_sized)) < 0) goto done;
                any_sized |= dim_sized;
                if (!dim_sized && __builtin_mul_overflow(nbytes, dim, &nbytes)) {
                    status = -1;
                    goto done;
                }
            }
            if (any_sized) {
                PyObject *entry = Py_BuildValue("(innn)", group, i, rank, (Py_ssize_t)(i + group * outputs));
                if (entry == NULL) goto failed;
                if (sized_buffers == NULL && (sized_buffers = PyList_New(0)) == NULL) {
                    Py_DECREF(entry);
                    goto failed;
                }
                int appended = PyList_Append(sized_buffers, entry);
                Py_DECREF(entry);
                if (appended < 0) goto failed;
                nbytes = 0;
            } else {
                buffers.count = mark;
                if (__builtin_add_overflow(static_bytes, nbytes, &static_bytes)) {
                    status = -1;
                    goto done;
                }
            }
            PyObject *value = PyLong_FromLongLong(nbytes);
            if (value == NULL || PyList_Append(buffer_bytes, value) < 0) {
                Py_XDECREF(value);
                goto failed;
            }
            Py_DECREF(value);
        }
    }
    Py_ssize_t n_sized_buffers = sized_buffers == NULL ? 0 : PyList_GET_SIZE(sized_buffers);
    int64_t header[6] = {n_values, PyList_GET_SIZE(derived), PyList_GET_SIZE(limits), 2 * steps_sized.count,
                         n_sized_buffers, static_bytes};
    for (int w = 0; w < 6; w++)
        if (words_add(&head, header[w]) < 0) goto failed;
    for (Py_ssize_t i = 0; i < body.count; i++)
        if (words_add(&head, body.words[i]) < 0) goto failed;
    for (Py_ssize_t i = 0; i < buffers.count; i++)
        if (words_add(&head, buffers.words[i]) < 0) goto failed;
    sized_steps = PyTuple_New(steps_sized.count);
    if (sized_steps == NULL) goto failed;
    for (Py_ssize_t i = 0; i < steps_sized.count; i++) {
        PyObject *index = PyLong_FromLongLong(steps_sized.words[i]);
        if (index == NULL) goto failed;
        PyTuple_SET_ITEM(sized_steps, i, index);
    }
    PyObject *sized_tuple = sized_buffers == NULL ? PyTuple_New(0) : PyList_AsTuple(sized_buffers);
    if (sized_tuple == NULL) goto failed;
    result = Py_BuildValue("(y#y#NNNLN)", (const char *)head.words, (Py_ssize_t)(head.count * sizeof(int64_t)),
                           (const char *)plan.words, (Py_ssize_t)(plan.count * sizeof(int64_t)), sized_steps,
                           sized_tuple, buffer_bytes, (long long)static_bytes, PyBool_FromLong(splitting));
    sized_steps = buffer_bytes = NULL; /* the result holds them (or they were released with it) */
    status = 0;
    goto done;
failed:
    status = -2;
done:
    PyMem_Free(head.words);
    PyMem_Free(body.words);
    PyMem_Free(plan.words);
    PyMem_Free(steps_sized.words);
    PyMem_Free(buffers.words);
    Py_XDECREF(sized_steps);
    Py_XDECREF(sized_buffers);
    Py_XDECREF(buffer_bytes);
    if (status == -2) return NULL;
    if (status < 0) { /* not of the form: a value past int64 among them too */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return result;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))configure, METH_FASTCALL,
     "configure(data_pointer_offset): where an array object holds its data pointer."},
    {"run", (PyCFunction)(void (*)(void))run, METH_FASTCALL,
     "run(plan, buffers, constant_pointers, outputs, temporaries, dims): call the plan's kernels in order."},
    {"sizes", (PyCFunction)(void (*)(void))sizes, METH_FASTCALL,
     "sizes(program, values, split_at): a binding's dims table, ranges, buffers' dims and bytes."},
    {"entry_runs", (PyCFunction)(void (*)(void))entry_runs, METH_FASTCALL,
     "entry_runs(steps, outputs, temporaries, derived, limits, itemsizes, addresses, routines, n_values, "
     "split_at): "
     "a template's sizes program, plan and layout from its cache entry."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__entry(void) {
    str_generation = PyUnicode_InternFromString("generation");
    str_seconds = PyUnicode_InternFromString("seconds");
    str_plan = PyUnicode_InternFromString("_plan");
    str_run_name = PyUnicode_InternFromString("run");
    str_shape = PyUnicode_InternFromString("shape");
    str_reshape = PyUnicode_InternFromString("reshape");
    if (str_generation == NULL || str_seconds == NULL || str_plan == NULL || str_run_name == NULL ||
        str_shape == NULL || str_reshape == NULL)
        return NULL;
    str_plan_words = PyUnicode_InternFromString("plan_words");
    str_first_tier = PyUnicode_InternFromString("first_tier");
    str_add = PyUnicode_InternFromString("add");
    if (str_plan_words == NULL || str_first_tier == NULL || str_add == NULL) return NULL;
    if (PyType_Ready(&PreparedType) < 0 || PyType_Ready(&ChainType) < 0 || PyType_Ready(&AnySizeType) < 0 ||
        PyType_Ready(&BoundType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Prepared", (PyObject *)&PreparedType) < 0 ||
        PyModule_AddObjectRef(m, "Chain", (PyObject *)&ChainType) < 0 ||
        PyModule_AddObjectRef(m, "AnySize", (PyObject *)&AnySizeType) < 0 ||
        PyModule_AddObjectRef(m, "Bound", (PyObject *)&BoundType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
