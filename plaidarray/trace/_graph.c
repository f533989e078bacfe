/* The lazy graph's hot paths in C: recording a node (and the array on it), walking a read's
   pending graph, and making its nodes ready with the buffers the run gave.

   An eager loop records a few ops and reads a value at every step, and on a small array
   both are all overhead: making a Node is a Python __init__ of twelve slots, and the walk
   of a read (to_hlo.walk) is a Python loop over nodes that numbers them and builds the
   structural key the executable cache is looked up by. This module does both with the
   same results, reading and writing the slots at the offsets their member descriptors
   give (as Cython's extension types do), so neither goes through attribute lookups. The
   Python versions stay the definitions: node.py and to_hlo.py use them when this module is
   not built, and tests/trace/test_read_path_in_c.py compares the two.

   configure(Node, Shape, attr_key, serials, traced, leaf_dtypes) reads the offsets, once.
   derive(op, operands, attrs, shape) -> Node          (node._derive_in_python)
   walk(roots, kept_bytes) -> (key, buffers, outputs, order), or None where the Python
   walk must decide (a traced placeholder reached: it raises the trace's error).
   untrack(key) -> bool                                 (no Python twin: there the collector untracks
                                                        what it can itself, to_hlo.keep_untracked)
   set_buffers(nodes, buffers)                         (node._set_buffers_in_python)
   ArrayHandle, the base of Array                       (array._ArrayHandleInPython)
   Elementwise, an elementwise function's common cases  (api.elementwise: the function it
   wraps is the definition, and runs wherever a call is not one of them)
   ready(buffer, shape, device) -> Node                  (node._ready_in_python)
   replay(steps, nodes): a recipe's nodes made again      (recipes._replay_in_python)
   made_steps(results, nodes, first): what a recipe makes (recipes._made_steps_in_python)
   signature(args, kwargs, arrays, nodes) -> tuple | None (recipes._signature)
   read(node): a read of one pending value           (materialize.materialize([node]), with
                                                        configure_reads' decide and finish) */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "_slots.h"

static Py_ssize_t off_op, off_operands, off_attrs, off_shape, off_buffer, off_arrays, off_depth, off_owned,
    off_weak, off_serial, off_reused, off_device, off_dims, off_dtype;
static PyTypeObject *node_type, *shape_type;
static PyObject *attr_key_fn; /* hlo.ir.attr_key */
static PyObject *serials;     /* node._SERIALS, an itertools.count */
static long long traced_depth; /* node.TRACED */
static PyObject *str_parameter, *str_itemsize, *empty_tuple, *zero;
static PyObject *leaf_dtypes; /* node.LEAF_DTYPES: NumPy's built-in descriptors, which refer to nothing of ours */
/* A cache key's nesting: (graph, given, tag), (rows, outputs), rows, a row, its attributes, an
   attribute, its value, an element. */
#define KEY_DEPTH 8

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *node, *shape, *attr_key, *counter, *leaves;
    long long traced;
    if (!PyArg_ParseTuple(args, "O!O!OOLO!", &PyType_Type, &node, &PyType_Type, &shape, &attr_key, &counter, &traced,
                          &PyTuple_Type, &leaves))
        return NULL;
    PyTypeObject *n = (PyTypeObject *)node, *s = (PyTypeObject *)shape;
    if (slot_offset(n, "op", &off_op) || slot_offset(n, "operands", &off_operands) ||
        slot_offset(n, "attrs", &off_attrs) || slot_offset(n, "shape", &off_shape) ||
        slot_offset(n, "buffer", &off_buffer) || slot_offset(n, "arrays", &off_arrays) ||
        slot_offset(n, "depth", &off_depth) || slot_offset(n, "owned", &off_owned) ||
        slot_offset(n, "weak", &off_weak) || slot_offset(n, "serial", &off_serial) ||
        slot_offset(n, "reused", &off_reused) || slot_offset(n, "device", &off_device) ||
        slot_offset(s, "dims", &off_dims) || slot_offset(s, "dtype", &off_dtype))
        return NULL;
    Py_XSETREF(node_type, (PyTypeObject *)Py_NewRef(node));
    Py_XSETREF(shape_type, (PyTypeObject *)Py_NewRef(shape));
    Py_XSETREF(attr_key_fn, Py_NewRef(attr_key));
    Py_XSETREF(serials, Py_NewRef(counter));
    Py_XSETREF(leaf_dtypes, Py_NewRef(leaves));
    traced_depth = traced;
    Py_RETURN_NONE;
}

static int check_configured(void) {
    if (node_type != NULL) return 0;
    PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure was not called");
    return -1;
}

/* Whether ``obj`` can be part of no reference cycle: None, a bool, an int, a float, a str,
   one of ``leaf_dtypes`` (NumPy's built-in descriptors, shared and referring to nothing of
   ours), or a tuple of such (at most ``depth`` deep), which is then untracked by the
   garbage collector, as the collector itself untracks a tuple of atoms (it keeps a tuple
   that holds a dtype, whose type it can traverse, and so every row of a walk's key). */
static int acyclic(PyObject *obj, int depth) {
    if (obj == Py_None || PyBool_Check(obj) || PyLong_CheckExact(obj) || PyFloat_CheckExact(obj) ||
        PyUnicode_CheckExact(obj))
        return 1;
    if (PyTuple_CheckExact(obj)) {
        if (!PyObject_GC_IsTracked(obj)) return 1;
        if (depth <= 0) return 0;
        int all = 1; /* every item visited: a key's rows are untracked though its ``given`` is a set */
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); i++)
            all &= acyclic(PyTuple_GET_ITEM(obj, i), depth - 1);
        if (all) PyObject_GC_UnTrack(obj);
        return all;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(leaf_dtypes); i++)
        if (obj == PyTuple_GET_ITEM(leaf_dtypes, i)) return 1;
    return 0;
}

/* ``untrack(key)``: the parts of an executable cache key that ``acyclic`` finds no cycle
   can pass through untracked by the garbage collector (the key itself too, where it is all
   such). The cache keeps a graph's key per size a loop met, ~10 tuples of a walk's rows
   each, which the collector traversed at every collection of the generations they were
   in and moved on to the oldest: a scan of 6000 new window sizes spent 51-83 ms in
   collections, 24-39 ms with its keys untracked. */
static PyObject *untrack(PyObject *self, PyObject *key) {
    (void)self;
    if (check_configured()) return NULL;
    return PyBool_FromLong(acyclic(key, KEY_DEPTH));
}

static int is_node(PyObject *obj) {
    if (Py_IS_TYPE(obj, node_type)) return 1;
    PyErr_Format(PyExc_TypeError, "expected a Node, got %.100s", Py_TYPE(obj)->tp_name);
    return 0;
}

/* The shape of a node, checked to be a Shape (slots are read off it). */
static PyObject *shape_of(PyObject *node) {
    PyObject *shape = SLOT(node, off_shape);
    if (shape != NULL && PyObject_TypeCheck(shape, shape_type)) return shape;
    PyErr_Format(PyExc_TypeError, "a node's shape must be a Shape, got %.100s",
                 shape == NULL ? "nothing" : Py_TYPE(shape)->tp_name);
    return NULL;
}

/* A slot's value, or NULL with AttributeError where it was never set. */
static PyObject *slot(PyObject *obj, Py_ssize_t offset, const char *name) {
    PyObject *value = SLOT(obj, offset);
    if (value == NULL) PyErr_Format(PyExc_AttributeError, "slot %s is not set", name);
    return value;
}

/* --- derive ---------------------------------------------------------------------------- */

/* A new Node of these slots, numbered by the node counter: it takes a reference to each
   but ``depth``, whose reference it steals (as Node.__init__ sets them; ``arrays`` 0, not
   owned, not weak, not reused). */
static PyObject *new_node(PyObject *op, PyObject *operands, PyObject *attrs, PyObject *shape, PyObject *buffer,
                          PyObject *depth, PyObject *device) {
    PyObject *serial = PyIter_Next(serials);
    PyObject *node = serial == NULL ? NULL : node_type->tp_alloc(node_type, 0);
    if (node == NULL) {
        if (serial == NULL && !PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "the node counter is exhausted");
        Py_XDECREF(serial);
        Py_DECREF(depth);
        return NULL;
    }
    SLOT(node, off_op) = Py_NewRef(op);
    SLOT(node, off_operands) = Py_NewRef(operands);
    SLOT(node, off_attrs) = Py_NewRef(attrs);
    SLOT(node, off_shape) = Py_NewRef(shape);
    SLOT(node, off_buffer) = Py_NewRef(buffer);
    SLOT(node, off_arrays) = Py_NewRef(zero);
    SLOT(node, off_depth) = depth;
    SLOT(node, off_owned) = Py_NewRef(Py_False);
    SLOT(node, off_weak) = Py_NewRef(Py_False);
    SLOT(node, off_serial) = serial;
    SLOT(node, off_reused) = Py_NewRef(Py_None);
    SLOT(node, off_device) = Py_NewRef(device);
    return node;
}

static PyObject *str_dynamic_slice;
static PyObject *shared_window(PyObject *operands, PyObject *attrs, PyObject *shape, PyObject *device);

/* The device of `operands` (a tuple of nodes) that have one, `*device` (borrowed; None if none
   has), as node.common_device: 0, or -1 with a ValueError naming two that differ, which `op`
   may not combine. */
static int common_device(PyObject *op, PyObject *operands, PyObject **device) {
    *device = Py_None;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(operands); i++) {
        PyObject *o = PyTuple_GET_ITEM(operands, i);
        if (!is_node(o)) return -1;
        PyObject *on = slot(o, off_device, "device");
        if (on == NULL) return -1;
        if (on != Py_None && on != *device) {
            if (*device != Py_None) {
                PyErr_Format(PyExc_ValueError, "%S: arrays on different devices, %S and %S; move one with to_device",
                             op, *device, on);
                return -1;
            }
            *device = on;
        }
    }
    return 0;
}

static PyObject *derive(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (check_configured()) return NULL;
    if (nargs != 4 || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "derive(op, operands: tuple, attrs, shape)");
        return NULL;
    }
    PyObject *operands = args[1], *shape = args[3];
    if (!PyObject_TypeCheck(shape, shape_type)) {
        PyErr_Format(PyExc_TypeError, "expected a Shape, got %.100s", Py_TYPE(shape)->tp_name);
        return NULL;
    }
    long long depth = 0;
    int traced = 0;
    PyObject *device; /* the operands' device: each is None (any) or the same */
    if (common_device(args[0], operands, &device)) return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(operands); i++) {
        PyObject *d = slot(PyTuple_GET_ITEM(operands, i), off_depth, "depth");
        if (d == NULL) return NULL;
        long long value = PyLong_AsLongLong(d);
        if (value == -1 && PyErr_Occurred()) return NULL;
        if (value == traced_depth) traced = 1;
        else if (value > depth) depth = value;
    }
    if (traced) depth = traced_depth - 1; /* + 1 below */
    else if (args[0] == str_dynamic_slice && depth == 0) {
        PyObject *window = shared_window(operands, args[2], shape, device);
        if (window != NULL || PyErr_Occurred()) return window;
    }
    PyObject *depth_obj = PyLong_FromLongLong(depth + 1);
    if (depth_obj == NULL) return NULL;
    return new_node(args[0], operands, args[2], shape, Py_None, depth_obj, device);
}

/* --- walk ------------------------------------------------------------------------------ */

/* Node -> number, open addressing on the object's address (nodes compare by identity). */
typedef struct {
    PyObject **keys;
    Py_ssize_t *values;
    size_t mask, used;
} Map;

/* A map's first capacity: a read's graph is often a node or two, and a larger table is
   memory to clear at every walk (three maps of 64 were ~500 instructions a read). */
#define MAP_START 8

static size_t slot_of(const Map *m, PyObject *key) {
    size_t i = (((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull) & m->mask;
    while (m->keys[i] != NULL && m->keys[i] != key) i = (i + 1) & m->mask;
    return i;
}

static int map_init(Map *m, size_t capacity) {
    m->mask = capacity - 1;
    m->used = 0;
    m->keys = PyMem_Calloc(capacity, sizeof(PyObject *));
    m->values = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    if (m->keys == NULL || m->values == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void map_free(Map *m) {
    PyMem_Free(m->keys);
    PyMem_Free(m->values);
}

/* The number of ``key``, or -1. */
static Py_ssize_t map_get(const Map *m, PyObject *key) {
    size_t i = slot_of(m, key);
    return m->keys[i] == NULL ? -1 : m->values[i];
}

static int map_set(Map *m, PyObject *key, Py_ssize_t value) {
    if (2 * (m->used + 1) > m->mask + 1) { /* keep it at most half full */
        Map grown;
        if (map_init(&grown, 2 * (m->mask + 1))) return -1;
        for (size_t i = 0; i <= m->mask; i++)
            if (m->keys[i] != NULL) {
                size_t j = slot_of(&grown, m->keys[i]);
                grown.keys[j] = m->keys[i];
                grown.values[j] = m->values[i];
                grown.used++;
            }
        map_free(m);
        *m = grown;
    }
    size_t i = slot_of(m, key);
    if (m->keys[i] == NULL) m->used++;
    m->keys[i] = key;
    m->values[i] = value;
    return 0;
}

/* A growable array of borrowed node pointers: the graph holds the nodes, and the caller
   holds GRAPH_LOCK, so no other thread changes it during the walk. */
typedef struct {
    PyObject **items;
    Py_ssize_t size, capacity;
} Nodes;

static int push(Nodes *s, PyObject *item) {
    if (s->size == s->capacity) {
        Py_ssize_t capacity = s->capacity ? 2 * s->capacity : 32;
        PyObject **items = PyMem_Realloc(s->items, capacity * sizeof(PyObject *));
        if (items == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->items = items;
        s->capacity = capacity;
    }
    s->items[s->size++] = item;
    return 0;
}

typedef struct {
    long long serial;
    PyObject *node;
} Numbered;

static int by_serial(const void *a, const void *b) {
    long long x = ((const Numbered *)a)->serial, y = ((const Numbered *)b)->serial;
    return (x > y) - (x < y);
}

/* (dims, dtype) of a shape: a parameter's row. */
static PyObject *dims_dtype(PyObject *shape) {
    if (shape == NULL) return NULL;
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    return dims == NULL || dtype == NULL ? NULL : PyTuple_Pack(2, dims, dtype);
}

/* Whether a value of ``shape`` has at most ``kept`` bytes (-1 on error). */
static int small_enough(PyObject *shape, long long kept) {
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    if (dims == NULL || dtype == NULL) return -1;
    PyObject *itemsize = PyObject_GetAttr(dtype, str_itemsize);
    if (itemsize == NULL) return -1;
    long long bytes = PyLong_AsLongLong(itemsize);
    Py_DECREF(itemsize);
    if (bytes == -1 && PyErr_Occurred()) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++) {
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, i));
        if (n == -1 && PyErr_Occurred()) return -1;
        if (n == 0) return 1;
        if (bytes <= kept) bytes = n > kept ? kept + 1 : bytes * n; /* else: too large already, a zero may follow */
    }
    return bytes <= kept;
}

/* The row of a reused scalar's broadcast: the head's op and attributes, its operand (the
   scalar's parameter at row ``source``), the head's dims and dtype. */
static PyObject *reused_row(PyObject *head, Py_ssize_t source) {
    if (!PyTuple_Check(head) || PyTuple_GET_SIZE(head) != 4) {
        PyErr_SetString(PyExc_TypeError, "a reused node's head must be (op, attrs, dims, dtype)");
        return NULL;
    }
    PyObject *at = Py_BuildValue("(n)", source);
    if (at == NULL) return NULL;
    PyObject *row = PyTuple_Pack(5, PyTuple_GET_ITEM(head, 0), PyTuple_GET_ITEM(head, 1), at,
                                 PyTuple_GET_ITEM(head, 2), PyTuple_GET_ITEM(head, 3));
    Py_DECREF(at);
    return row;
}

/* A walk's rows before they are made into its key's tuples: each row's kind and node (a
   reused scalar's broadcast: 'S' its scalar's parameter, then 'R' the broadcast), and an op
   row's operand numbers, so that a read the digest table serves (``digest_executable``) makes no
   tuple of them, and one it does not makes the key (``walked_tuple``) from the same walk. */
#define ROW_PARAMETER 'P'
#define ROW_SCALAR 'S'
#define ROW_REUSED 'R'
#define ROW_OP 'O'

typedef struct {
    PyObject *buffers, *order, *outputs;
    Py_ssize_t n_rows, capacity;
    char *kinds;
    char *reads; /* per row: whether its value depends on a buffer */
    PyObject **nodes;
    Py_ssize_t *first, *width; /* per op row: its operand numbers' start in ``numbers`` and count */
    Py_ssize_t *numbers, n_numbers, numbers_capacity;
    Map index;
} Walk;

static void *grown(void *items, Py_ssize_t capacity, size_t size) {
    void *made = PyMem_Realloc(items, capacity * size);
    if (made == NULL) PyErr_NoMemory();
    return made;
}

/* Room for ``needed`` rows. -1 on error. */
static int reserve_rows(Walk *w, Py_ssize_t needed) {
    if (needed <= w->capacity) return 0;
    Py_ssize_t capacity = 2 * needed;
    char *kinds = grown(w->kinds, capacity, 1);
    if (kinds == NULL) return -1;
    w->kinds = kinds;
    char *reads = grown(w->reads, capacity, 1);
    if (reads == NULL) return -1;
    w->reads = reads;
    PyObject **nodes = grown(w->nodes, capacity, sizeof(PyObject *));
    if (nodes == NULL) return -1;
    w->nodes = nodes;
    Py_ssize_t *first = grown(w->first, capacity, sizeof(Py_ssize_t));
    if (first == NULL) return -1;
    w->first = first;
    Py_ssize_t *width = grown(w->width, capacity, sizeof(Py_ssize_t));
    if (width == NULL) return -1;
    w->width = width;
    w->capacity = capacity;
    return 0;
}

static int push_number(Walk *w, Py_ssize_t number) {
    if (w->n_numbers == w->numbers_capacity) {
        Py_ssize_t capacity = w->numbers_capacity ? 2 * w->numbers_capacity : 32;
        Py_ssize_t *numbers = grown(w->numbers, capacity, sizeof(Py_ssize_t));
        if (numbers == NULL) return -1;
        w->numbers = numbers;
        w->numbers_capacity = capacity;
    }
    w->numbers[w->n_numbers++] = number;
    return 0;
}

static void walk_free(Walk *w) {
    PyMem_Free(w->kinds);
    PyMem_Free(w->reads);
    PyMem_Free(w->nodes);
    PyMem_Free(w->first);
    PyMem_Free(w->width);
    PyMem_Free(w->numbers);
    map_free(&w->index);
    Py_XDECREF(w->buffers);
    Py_XDECREF(w->order);
    Py_XDECREF(w->outputs);
}

/* A row of ``kind`` for ``node``; its number. */
static Py_ssize_t add_row(Walk *w, char kind, PyObject *node, char reads) {
    Py_ssize_t n = w->n_rows++;
    w->kinds[n] = kind;
    w->nodes[n] = node;
    w->reads[n] = reads;
    w->first[n] = w->width[n] = 0;
    return n;
}

/* The row number of operand ``o`` of a node, adding rows for it where it has none: a
   ready node becomes a parameter where it is first used; a reused scalar adds its
   parameter and broadcast at each use. ``depends`` is set when the operand's value
   depends on a buffer. -1 on error. */
static Py_ssize_t operand_row(Walk *w, PyObject *o, int *depends) {
    Py_ssize_t i = map_get(&w->index, o);
    if (i >= 0) {
        if (w->reads[i]) *depends = 1;
        return i;
    }
    PyObject *head = slot(o, off_reused, "reused");
    if (head == NULL || reserve_rows(w, w->n_rows + 2)) return -1;
    *depends = 1;
    if (head == Py_None) {
        if (map_set(&w->index, o, w->n_rows) || PyList_Append(w->buffers, SLOT(o, off_buffer)) ||
            PyList_Append(w->order, o))
            return -1;
        return add_row(w, ROW_PARAMETER, o, 1);
    }
    if (!PyTuple_Check(head) || PyTuple_GET_SIZE(head) != 4) {
        PyErr_SetString(PyExc_TypeError, "a reused node's head must be (op, attrs, dims, dtype)");
        return -1;
    }
    PyObject *inner = slot(o, off_operands, "operands");
    if (inner == NULL) return -1;
    if (PyTuple_GET_SIZE(inner) != 1 || !is_node(PyTuple_GET_ITEM(inner, 0))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a reused node has one operand");
        return -1;
    }
    PyObject *scalar = PyTuple_GET_ITEM(inner, 0);
    if (PyList_Append(w->buffers, SLOT(scalar, off_buffer)) || PyList_Append(w->order, scalar) ||
        PyList_Append(w->order, o))
        return -1;
    add_row(w, ROW_SCALAR, scalar, 1);
    return add_row(w, ROW_REUSED, o, 1);
}

/* The pending nodes under ``roots`` (each once), in creation order, which is topological:
   a node is made after its operands. NULL on error. */
static Numbered *pending_nodes(PyObject *roots, Py_ssize_t *count) {
    Map seen;
    Nodes stack = {0}, found = {0};
    Numbered *numbered = NULL;
    if (map_init(&seen, MAP_START)) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(roots); i++) {
        PyObject *root = PyList_GET_ITEM(roots, i);
        if (!is_node(root)) goto done;
        if (map_get(&seen, root) >= 0) continue;
        if (map_set(&seen, root, 0) || push(&stack, root) || push(&found, root)) goto done;
    }
    while (stack.size) {
        PyObject *operands = slot(stack.items[--stack.size], off_operands, "operands");
        if (operands == NULL) goto done;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(operands); j++) {
            PyObject *o = PyTuple_GET_ITEM(operands, j);
            if (!is_node(o)) goto done;
            if (SLOT(o, off_buffer) != Py_None || SLOT(o, off_reused) != Py_None || map_get(&seen, o) >= 0) continue;
            if (map_set(&seen, o, 0) || push(&stack, o) || push(&found, o)) goto done;
        }
    }
    numbered = PyMem_Malloc((found.size ? found.size : 1) * sizeof(Numbered));
    if (numbered == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < found.size; i++) {
        PyObject *serial = slot(found.items[i], off_serial, "serial");
        numbered[i].node = found.items[i];
        numbered[i].serial = serial == NULL ? -1 : PyLong_AsLongLong(serial);
        if (PyErr_Occurred()) {
            PyMem_Free(numbered);
            numbered = NULL;
            goto done;
        }
    }
    qsort(numbered, found.size, sizeof(Numbered), by_serial);
    *count = found.size;
done:
    map_free(&seen);
    PyMem_Free(stack.items);
    PyMem_Free(found.items);
    return numbered;
}

/* ``pending(node)``: node.pending_graph in C, the pending nodes of ``node``'s graph in
   creation order (``node`` last), Python scalars' shared broadcasts left out. A loop cut
   at the pending bound walks its graph at every cut (``cuts.py``): ~40 us for 80 nodes
   in Python. */
/* pending_nodes of the one root ``node`` (checked to be a node); NULL on error. */
static Numbered *pending_of(PyObject *node, Py_ssize_t *count) {
    if (!is_node(node)) return NULL;
    PyObject *roots = PyList_New(1);
    if (roots == NULL) return NULL;
    PyList_SET_ITEM(roots, 0, Py_NewRef(node));
    *count = 0;
    Numbered *found = pending_nodes(roots, count);
    Py_DECREF(roots);
    return found;
}

static PyObject *pending(PyObject *self, PyObject *node) {
    (void)self;
    Py_ssize_t count;
    Numbered *found = pending_of(node, &count);
    if (found == NULL) return NULL;
    PyObject *result = PyList_New(count);
    if (result != NULL)
        for (Py_ssize_t i = 0; i < count; i++) PyList_SET_ITEM(result, i, Py_NewRef(found[i].node));
    PyMem_Free(found);
    return result;
}

/* ``recount_depths(node)``: cuts.recorded_again in C, each pending node of ``node``'s graph
   given 1 + its operands' largest depth (0 for none), in creation order: a loop whose state
   stays pending past its reads (an n-body step's positions) counted its graph again at each
   step, ~10 us of Python for 50 nodes. */
static PyObject *recount_depths(PyObject *self, PyObject *node) {
    (void)self;
    Py_ssize_t count;
    Numbered *found = pending_of(node, &count);
    if (found == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *n = found[i].node, *operands = slot(n, off_operands, "operands");
        if (operands == NULL) goto failed;
        long long deepest = 0;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(operands); j++) {
            PyObject *o = PyTuple_GET_ITEM(operands, j);
            PyObject *d = is_node(o) ? slot(o, off_depth, "depth") : NULL;
            long long value = d == NULL ? -1 : PyLong_AsLongLong(d);
            if (d == NULL || (value == -1 && PyErr_Occurred())) goto failed;
            if (j == 0 || value > deepest) deepest = value;
        }
        PyObject *depth = PyLong_FromLongLong(1 + deepest);
        if (depth == NULL) goto failed;
        Py_SETREF(SLOT(n, off_depth), depth);
    }
    PyMem_Free(found);
    Py_RETURN_NONE;
failed:
    PyMem_Free(found);
    return NULL;
}

/* ``outputs`` with each node once, first occurrences first (a new reference). */
static PyObject *unique(PyObject *outputs) {
    Map once;
    PyObject *result = PyList_New(0);
    if (result == NULL || map_init(&once, MAP_START)) {
        Py_XDECREF(result);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outputs); i++) {
        PyObject *item = PyList_GET_ITEM(outputs, i);
        if (map_get(&once, item) >= 0) continue;
        if (map_set(&once, item, 0) || PyList_Append(result, item)) {
            Py_CLEAR(result);
            break;
        }
    }
    map_free(&once);
    return result;
}

/* hlo.ir.attr_key(attrs), the items sorted into a tuple, made here for a dict (calling
   the Python function was 0.3 us, a third of a small walk); other mappings go to it. */
static PyObject *attrs_key(PyObject *attrs) {
    if (!PyDict_CheckExact(attrs)) return PyObject_CallOneArg(attr_key_fn, attrs);
    PyObject *items = PyDict_Items(attrs);
    if (items == NULL || PyList_Sort(items)) {
        Py_XDECREF(items);
        return NULL;
    }
    PyObject *key = PyList_AsTuple(items);
    Py_DECREF(items);
    return key;
}

/* The module configured and a fast call's two arguments, the first a list; else `usage`
   as the TypeError (walk and set_buffers take theirs so). */
static int list_and_one_more(PyObject *const *args, Py_ssize_t nargs, const char *usage) {
    if (check_configured()) return -1;
    if (nargs == 2 && PyList_Check(args[0])) return 0;
    PyErr_SetString(PyExc_TypeError, usage);
    return -1;
}

/* Adds to ``outputs`` the pending nodes of the walk that no array holds but something
   outside the graph refers to (a pending node of another graph: the state a loop's later
   readings are computed from), but tuples, as ``walk`` in to_hlo.py: each is referred to by
   its consumers' operand tuples and the walk's order list, and anything more is outside.
   -1 on error. */
static int shared_outputs(Walk *w, Numbered *pending, Py_ssize_t n_pending, PyObject *outputs, PyObject *root,
                          long long kept) {
    Py_ssize_t n_rows = w->n_rows;
    Py_ssize_t *uses = PyMem_Calloc(n_rows ? n_rows : 1, sizeof(Py_ssize_t));
    if (uses == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int failed = 0;
    for (Py_ssize_t k = 0; k < n_pending; k++) {
        PyObject *operands = SLOT(pending[k].node, off_operands);
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(operands); j++) {
            Py_ssize_t i = map_get(&w->index, PyTuple_GET_ITEM(operands, j));
            if (i >= 0) uses[i]++;
        }
    }
    for (Py_ssize_t k = 0; k < n_pending && !failed; k++) {
        PyObject *node = pending[k].node;
        PyObject *arrays = SLOT(node, off_arrays);
        Py_ssize_t i = map_get(&w->index, node);
        if (node == root || i < 0 || arrays == NULL || PyObject_IsTrue(arrays) || Py_REFCNT(node) <= uses[i] + 1 ||
            !Py_IS_TYPE(shape_of(node), shape_type)) /* a tuple: its elements are the values */
            continue;
        int keep = w->reads[i] ? 1 : small_enough(shape_of(node), kept);
        failed = keep < 0 || (keep && PyList_Append(outputs, node));
    }
    PyMem_Free(uses);
    return failed ? -1 : 0;
}

/* Walks the pending graph under ``roots`` (each once) into ``w``: its rows, its buffers and
   order, and its outputs (the roots, then the live nodes a read keeps and shared_outputs', each
   once). 1; 0 where a traced placeholder is reached (the Python walk raises the trace's
   error); -1 on error. The caller frees ``w`` (walk_free) in every case. */
static int walk_graph(PyObject *roots, long long kept, Walk *w) {
    memset(w, 0, sizeof *w);
    Py_ssize_t n_roots = PyList_GET_SIZE(roots), n_pending = 0;
    Numbered *pending = NULL;
    int status = -1;
    w->buffers = PyList_New(0);
    w->order = PyList_New(0);
    if (w->buffers == NULL || w->order == NULL || map_init(&w->index, MAP_START) ||
        (pending = pending_nodes(roots, &n_pending)) == NULL ||
        (w->outputs = PyList_GetSlice(roots, 0, n_roots)) == NULL)
        goto done;
    PyObject *root = n_roots == 1 ? PyList_GET_ITEM(roots, 0) : NULL; /* a read of one value, live itself */
    for (Py_ssize_t k = 0; k < n_pending; k++) {
        PyObject *node = pending[k].node;
        PyObject *operands = slot(node, off_operands, "operands");
        if (operands == NULL) goto done;
        Py_ssize_t first = w->n_numbers, n_operands = PyTuple_GET_SIZE(operands);
        int depends = 0;
        for (Py_ssize_t j = 0; j < n_operands; j++) {
            Py_ssize_t i = operand_row(w, PyTuple_GET_ITEM(operands, j), &depends);
            if (i < 0 || push_number(w, i)) goto done;
        }
        PyObject *op = slot(node, off_op, "op"), *depth = slot(node, off_depth, "depth");
        PyObject *shape = shape_of(node), *attrs = slot(node, off_attrs, "attrs");
        if (op == NULL || depth == NULL || shape == NULL || attrs == NULL) goto done;
        if (PyLong_AsLongLong(depth) < 0 && PyUnicode_Check(op) && PyUnicode_Compare(op, str_parameter) == 0) {
            status = 0; /* a traced placeholder: the Python walk raises the trace's error */
            goto done;
        }
        if (PyErr_Occurred() || reserve_rows(w, w->n_rows + 1) || map_set(&w->index, node, w->n_rows) ||
            PyList_Append(w->order, node))
            goto done;
        Py_ssize_t n = add_row(w, ROW_OP, node, (char)depends);
        w->first[n] = first;
        w->width[n] = n_operands;
        PyObject *arrays = slot(node, off_arrays, "arrays");
        int live = arrays == NULL ? -1 : PyObject_IsTrue(arrays);
        if (live < 0) goto done;
        if (live && node != root) {
            int keep = depends ? 1 : small_enough(shape, kept);
            if (keep < 0 || (keep && PyList_Append(w->outputs, node))) goto done;
        }
    }
    if (shared_outputs(w, pending, n_pending, w->outputs, root, kept)) goto done;
    if (PyList_GET_SIZE(w->outputs) > n_roots) {
        PyObject *once = unique(w->outputs);
        if (once == NULL) goto done;
        Py_SETREF(w->outputs, once);
    }
    status = 1;
done:
    PyMem_Free(pending);
    return status;
}

/* An op row of the key: (op, attributes' key, operand numbers, dims, dtype). */
static PyObject *op_row(Walk *w, Py_ssize_t r) {
    PyObject *node = w->nodes[r], *attrs = SLOT(node, off_attrs), *shape = shape_of(node);
    PyObject *at = PyTuple_New(w->width[r]);
    if (at == NULL || shape == NULL) {
        Py_XDECREF(at);
        return NULL;
    }
    for (Py_ssize_t j = 0; j < w->width[r]; j++) {
        PyObject *number = PyLong_FromSsize_t(w->numbers[w->first[r] + j]);
        if (number == NULL) {
            Py_DECREF(at);
            return NULL;
        }
        PyTuple_SET_ITEM(at, j, number);
    }
    int has_attrs = PyObject_IsTrue(attrs);
    PyObject *key = has_attrs > 0 ? attrs_key(attrs) : has_attrs == 0 ? Py_NewRef(empty_tuple) : NULL;
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    PyObject *row = key == NULL || dims == NULL || dtype == NULL ? NULL
                                                                 : PyTuple_Pack(5, SLOT(node, off_op), key, at, dims, dtype);
    Py_XDECREF(key);
    Py_DECREF(at);
    return row;
}

/* The tuple of numbers of the walk's outputs. */
static PyObject *output_numbers(Walk *w) {
    PyObject *numbers = PyTuple_New(PyList_GET_SIZE(w->outputs));
    if (numbers == NULL) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(w->outputs); i++) {
        PyObject *number = PyLong_FromSsize_t(map_get(&w->index, PyList_GET_ITEM(w->outputs, i)));
        if (number == NULL) {
            Py_DECREF(numbers);
            return NULL;
        }
        PyTuple_SET_ITEM(numbers, i, number);
    }
    return numbers;
}

/* ``walk``'s result of a walk: ((rows, output numbers), buffers, outputs, order). */
static PyObject *walked_tuple(Walk *w) {
    PyObject *rows = PyTuple_New(w->n_rows);
    if (rows == NULL) return NULL;
    for (Py_ssize_t r = 0; r < w->n_rows; r++) {
        char kind = w->kinds[r];
        PyObject *row = kind == ROW_OP ? op_row(w, r)
                        : kind == ROW_REUSED ? reused_row(SLOT(w->nodes[r], off_reused), r - 1)
                                             : dims_dtype(shape_of(w->nodes[r]));
        if (row == NULL) {
            Py_DECREF(rows);
            return NULL;
        }
        PyTuple_SET_ITEM(rows, r, row);
    }
    PyObject *numbers = output_numbers(w);
    PyObject *key = numbers == NULL ? NULL : PyTuple_Pack(2, rows, numbers);
    Py_DECREF(rows);
    Py_XDECREF(numbers);
    if (key == NULL) return NULL;
    PyObject *result = PyTuple_Pack(4, key, w->buffers, w->outputs, w->order);
    Py_DECREF(key);
    return result;
}

static PyObject *walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (list_and_one_more(args, nargs, "walk(roots: list, kept_bytes: int)")) return NULL;
    long long kept = PyLong_AsLongLong(args[1]);
    if (kept == -1 && PyErr_Occurred()) return NULL;
    Walk w;
    int status = walk_graph(args[0], kept, &w);
    PyObject *result = status < 0 ? NULL : status == 0 ? Py_NewRef(Py_None) : walked_tuple(&w);
    walk_free(&w);
    return result;
}

/* --- a walk's digest --------------------------------------------------------------------- */

/* A read's key is its graph's rows as nested tuples: made, hashed and compared with the
   cached key at every read, ~15 us of a 30-row graph's ~25 us read, whose kernels ran in 4.
   Its digest is the same rows written as bytes (``digest_of``): each value after a tag of
   its type, a tuple's and a string's after their lengths, so that bytes read one way only
   and equal digests hold equal rows. Ints, floats, strings, None, bools and tuples are
   written as their values; anything else (a dtype) as its address, which stands for that
   object while it lives: the digest table (``ExecutableCache.digests``) holds each digest
   with the key it stands for, which holds every such object, so no other object takes its
   address while the digest is in the table. A float is written as its bits, and a dict's
   items in their order: equal keys of other bits (0.0 and -0.0) or orders have other
   digests, which miss and read by the key, as any read the table has no digest for. */
typedef struct {
    char *data;
    size_t size, capacity;
} Bytes;

static int put(Bytes *b, const void *data, size_t n) {
    if (b->size + n > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 512;
        while (capacity < b->size + n) capacity *= 2;
        char *made = PyMem_Realloc(b->data, capacity);
        if (made == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = made;
        b->capacity = capacity;
    }
    memcpy(b->data + b->size, data, n);
    b->size += n;
    return 0;
}

static int put_tag(Bytes *b, char tag) { return put(b, &tag, 1); }

static int put_int(Bytes *b, char tag, long long value) { return put_tag(b, tag) || put(b, &value, sizeof value); }

static int put_value(Bytes *b, PyObject *obj, int depth) {
    if (obj == Py_None) return put_tag(b, 'N');
    if (obj == Py_True) return put_tag(b, 'T');
    if (obj == Py_False) return put_tag(b, 'F');
    if (PyLong_CheckExact(obj)) {
        int overflow;
        long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
        if (value == -1 && PyErr_Occurred()) return -1;
        if (!overflow) return put_int(b, 'i', value);
    } else if (PyFloat_CheckExact(obj)) {
        double value = PyFloat_AS_DOUBLE(obj);
        return put_tag(b, 'f') || put(b, &value, sizeof value);
    } else if (PyUnicode_CheckExact(obj)) {
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(obj) < 0) return -1;
#endif
        Py_ssize_t n = PyUnicode_GET_LENGTH(obj);
        int kind = PyUnicode_KIND(obj);
        return put_int(b, 's', n) || put_tag(b, (char)kind) || put(b, PyUnicode_DATA(obj), (size_t)n * kind);
    } else if (PyTuple_CheckExact(obj) && depth > 0) {
        if (put_int(b, 't', PyTuple_GET_SIZE(obj))) return -1;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(obj); i++)
            if (put_value(b, PyTuple_GET_ITEM(obj, i), depth - 1)) return -1;
        return 0;
    }
    uintptr_t address = (uintptr_t)obj;
    return put_tag(b, 'p') || put(b, &address, sizeof address);
}

/* A shape's dims and dtype; 1 where it is not a Shape itself (the key's rows say), -1 on error. */
static int put_shape(Bytes *b, PyObject *shape) {
    if (shape == NULL || !Py_IS_TYPE(shape, shape_type) || SLOT(shape, off_dims) == NULL ||
        SLOT(shape, off_dtype) == NULL)
        return 1;
    return put_value(b, SLOT(shape, off_dims), KEY_DEPTH) || put_value(b, SLOT(shape, off_dtype), KEY_DEPTH) ? -1 : 0;
}

/* The digest of a walk (see above) read on the backend of cache tag ``tag``: bytes, or NULL
   without an error where it has none (an attribute mapping that is not a dict, a shape that
   is not a Shape: the key's rows say what they are), or with one. */
static PyObject *digest_of(Walk *w, PyObject *tag) {
    Bytes b = {NULL, 0, 0};
    int status = 0;
    for (Py_ssize_t r = 0; r < w->n_rows && !status; r++) {
        PyObject *node = w->nodes[r];
        char kind = w->kinds[r];
        if (kind == ROW_OP) {
            PyObject *attrs = SLOT(node, off_attrs);
            if (!PyDict_CheckExact(attrs)) {
                status = 1;
                break;
            }
            status = put_tag(&b, ROW_OP) || put_value(&b, SLOT(node, off_op), KEY_DEPTH) ||
                     put_int(&b, 'a', PyDict_GET_SIZE(attrs)) ? -1 : 0;
            PyObject *name, *value;
            Py_ssize_t at = 0;
            while (!status && PyDict_Next(attrs, &at, &name, &value))
                status = put_value(&b, name, KEY_DEPTH) || put_value(&b, value, KEY_DEPTH) ? -1 : 0;
            status = status ? status : put_int(&b, 'w', w->width[r]) ? -1 : 0;
            for (Py_ssize_t j = 0; j < w->width[r] && !status; j++)
                status = put(&b, &w->numbers[w->first[r] + j], sizeof(Py_ssize_t));
            status = status ? status : put_shape(&b, SLOT(node, off_shape));
        } else if (kind == ROW_REUSED) {
            status = put_tag(&b, ROW_REUSED) || put_value(&b, SLOT(node, off_reused), KEY_DEPTH) ? -1 : 0;
        } else {
            status = put_tag(&b, ROW_PARAMETER) ? -1 : put_shape(&b, SLOT(node, off_shape));
        }
    }
    if (!status) {
        Py_ssize_t n = PyList_GET_SIZE(w->outputs);
        status = put_int(&b, 'u', n) ? -1 : 0;
        for (Py_ssize_t i = 0; i < n && !status; i++) {
            Py_ssize_t number = map_get(&w->index, PyList_GET_ITEM(w->outputs, i));
            status = put(&b, &number, sizeof number);
        }
        status = status ? status : put_value(&b, tag, KEY_DEPTH);
    }
    PyObject *digest = status ? NULL : PyBytes_FromStringAndSize(b.data, (Py_ssize_t)b.size);
    PyMem_Free(b.data);
    return digest;
}

/* --- set_buffers ----------------------------------------------------------------------- */

/* Node.set_buffer(buffer) on each node of `nodes` whose buffer is still None (another
   thread may have computed it meanwhile), with the buffer at its index. What the nodes
   held is released after every node is set, so no finalizer it runs sees a node half
   made ready. */
static PyObject *set_buffers(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (list_and_one_more(args, nargs, "set_buffers(nodes: list, buffers)")) return NULL;
    PyObject *nodes = args[0];
    Py_ssize_t n = PyList_GET_SIZE(nodes);
    for (Py_ssize_t i = 0; i < n; i++)
        if (!is_node(PyList_GET_ITEM(nodes, i))) return NULL;
    PyObject *buffers = PySequence_Fast(args[1], "set_buffers: buffers must be a sequence");
    if (buffers == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(buffers) < n) {
        PyErr_SetString(PyExc_ValueError, "set_buffers: fewer buffers than nodes");
        Py_DECREF(buffers);
        return NULL;
    }
    PyObject *released = PyList_New(0);
    if (released == NULL) {
        Py_DECREF(buffers);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *node = PyList_GET_ITEM(nodes, i);
        if (SLOT(node, off_buffer) != Py_None) continue;
        PyObject *attrs = PyDict_New();
        if (attrs == NULL) break;
        PyObject *old[] = {SLOT(node, off_op), SLOT(node, off_operands), SLOT(node, off_attrs), SLOT(node, off_depth),
                           SLOT(node, off_owned), SLOT(node, off_buffer)};
        SLOT(node, off_buffer) = Py_NewRef(PySequence_Fast_GET_ITEM(buffers, i));
        SLOT(node, off_op) = Py_NewRef(Py_None);
        SLOT(node, off_operands) = Py_NewRef(empty_tuple);
        SLOT(node, off_attrs) = attrs;
        SLOT(node, off_depth) = Py_NewRef(zero);
        SLOT(node, off_owned) = Py_NewRef(Py_True);
        for (size_t j = 0; j < sizeof old / sizeof *old; j++) {
            if (old[j] == NULL) continue;
            if (PyList_Append(released, old[j])) PyErr_Clear(); /* then it goes at once, below */
            Py_DECREF(old[j]);
        }
    }
    Py_DECREF(released);
    Py_DECREF(buffers);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* --- ArrayHandle ----------------------------------------------------------------------- */

/* The base of trace.array.Array: its slots _node and _base, and the count of arrays on a
   node (Node.arrays) kept as arrays are made and freed (array._ArrayHandleInPython, its
   definition). An eager loop makes an Array for every op it records; a Python __init__ and
   __del__ were a tenth of recording one. */
typedef struct {
    PyObject_HEAD
    PyObject *node;
    PyObject *base;
} Handle;

static int add_to_arrays(PyObject *node, long long delta) {
    PyObject *count = slot(node, off_arrays, "arrays");
    if (count == NULL) return -1;
    long long value = PyLong_AsLongLong(count);
    if (value == -1 && PyErr_Occurred()) return -1;
    PyObject *changed = PyLong_FromLongLong(value + delta);
    if (changed == NULL) return -1;
    SLOT(node, off_arrays) = changed;
    Py_DECREF(count);
    return 0;
}

/* Drop the handle's node, counting one array fewer on it (what Array.__del__ did). A node
   that the garbage collector already cleared, in the same cycle as the array, has no count
   left to keep (a Python __del__ ran before any clearing; this runs in it). */
static void release(Handle *self) {
    PyObject *node = self->node;
    if (node == NULL) return;
    self->node = NULL;
    if (Py_IS_TYPE(node, node_type) && SLOT(node, off_arrays) != NULL && add_to_arrays(node, -1))
        PyErr_WriteUnraisable(NULL);
    Py_DECREF(node);
}

static int handle_init(Handle *self, PyObject *args, PyObject *kwargs) {
    if (check_configured()) return -1;
    if ((kwargs != NULL && PyDict_GET_SIZE(kwargs)) || PyTuple_GET_SIZE(args) != 1) {
        PyErr_SetString(PyExc_TypeError, "Array(node) takes one Node");
        return -1;
    }
    PyObject *node = PyTuple_GET_ITEM(args, 0);
    if (!is_node(node) || add_to_arrays(node, 1)) return -1;
    release(self);
    self->node = Py_NewRef(node);
    Py_XSETREF(self->base, Py_NewRef(Py_None));
    return 0;
}

static int handle_traverse(Handle *self, visitproc visit, void *arg) {
    Py_VISIT(self->node);
    Py_VISIT(self->base);
    return 0;
}

static int handle_clear(Handle *self) {
    release(self);
    Py_CLEAR(self->base);
    return 0;
}

static void handle_dealloc(Handle *self) {
    PyObject_GC_UnTrack(self);
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    handle_clear(self);
    PyErr_Restore(type, value, traceback);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* --- element reads and stores ------------------------------------------------------------- */

/* What ``x[i]``, ``m[i, j]`` takes to read an element of a computed array in C
   (``configure_elements``): a loop's element read was ~1.2 us of Python (the method, the
   key's checks, the transfer's load, a ready node and its Array), against NumPy's 0.1. */
static PyObject *getitem_in_python; /* Array._getitem: every other key, and the definition */
static PyObject *subscript_window;  /* the Window x[key] asks first (use_window), or NULL */
static PyObject *setitem_in_python; /* Array._setitem: every other store, and the definition */
static PyObject *exact_scalars;     /* backend.transfer.EXACT_SCALARS */
static PyObject *scalar_value_fn;   /* trace.scalars.evaluate */
static PyTypeObject *element_array_type, *ndarray_type;
static PyObject *host_transfers, *to_array; /* backend.transfer.HOST, numpy.array */
static PyObject *element_shapes;           /* dtype -> Shape((), dtype) */
static PyObject *str_transfers, *str_computed, *str_acquire, *str_release;
static PyObject *stores_lock; /* trace.array._STORES */
static PyTypeObject *family_type; /* trace.views.Family */
static PyTypeObject *view_of_type;  /* trace.views.ViewOf (configure_signature's) */
static PyObject *str_pin, *str_views, *str_family, *str_layout, *str_bounds;

static PyObject *ready_node(PyObject *buffer, PyObject *shape, PyObject *device);
static PyTypeObject handle_type;
static PyObject *tracing_globals; /* trace.tracing's namespace: _ACTIVE */
static int tracing_now(void);

static PyObject *configure_elements(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *array, *fallback, *store, *host, *make, *ndarray, *exact, *scalar, *lock, *family;
    if (!PyArg_ParseTuple(args, "O!OOOOO!O!OOO!", &PyType_Type, &array, &fallback, &store, &host, &make, &PyType_Type,
                          &ndarray, &PyDict_Type, &exact, &scalar, &lock, &PyType_Type, &family))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)array, &handle_type)) {
        PyErr_SetString(PyExc_TypeError, "configure_elements: the array type must derive from ArrayHandle");
        return NULL;
    }
    if (element_shapes == NULL && (element_shapes = PyDict_New()) == NULL) return NULL;
    Py_XSETREF(element_array_type, (PyTypeObject *)Py_NewRef(array));
    Py_XSETREF(getitem_in_python, Py_NewRef(fallback));
    Py_XSETREF(setitem_in_python, Py_NewRef(store));
    Py_XSETREF(exact_scalars, Py_NewRef(exact));
    Py_XSETREF(scalar_value_fn, Py_NewRef(scalar));
    Py_XSETREF(stores_lock, Py_NewRef(lock));
    Py_XSETREF(family_type, (PyTypeObject *)Py_NewRef(family));
    Py_XSETREF(host_transfers, Py_NewRef(host));
    Py_XSETREF(to_array, Py_NewRef(make));
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(ndarray));
    Py_RETURN_NONE;
}

/* Whether ``index`` (a Python int, exactly) is in range of a dimension of ``n``
   (negative ones from the end); -1 on error. */
static int index_in_range(PyObject *index, PyObject *n) {
    if (!PyLong_CheckExact(index) || !PyLong_CheckExact(n)) return 0;
    int overflow;
    long long i = PyLong_AsLongLongAndOverflow(index, &overflow), size = PyLong_AsLongLong(n);
    if ((i == -1 || size == -1) && PyErr_Occurred()) return -1;
    return !overflow && -size <= i && i < size;
}

/* Whether ``key`` is an int per dimension of ``dims``, each in range (0: not; -1: error). */
static int element_key(PyObject *key, PyObject *dims) {
    Py_ssize_t rank = PyTuple_GET_SIZE(dims);
    if (PyLong_CheckExact(key)) return rank == 1 ? index_in_range(key, PyTuple_GET_ITEM(dims, 0)) : 0;
    if (!PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != rank) return 0;
    for (Py_ssize_t k = 0; k < rank; k++) {
        int in = index_in_range(PyTuple_GET_ITEM(key, k), PyTuple_GET_ITEM(dims, k));
        if (in <= 0) return in;
    }
    return 1;
}

/* Whether ``device`` (a node's) keeps its buffers in host memory (-1: error). */
static int on_host(PyObject *device) { return transfers_are(device, str_transfers, host_transfers); }

/* ``element``'s read of ``node``'s element, the caller holding the node. */
static PyObject *element_of(PyObject *node, PyObject *key) {
    PyObject *buffer = SLOT(node, off_buffer), *shape = SLOT(node, off_shape), *device = SLOT(node, off_device);
    if (buffer == NULL || !Py_IS_TYPE(buffer, ndarray_type) || shape == NULL || device == NULL ||
        !Py_IS_TYPE(shape, shape_type))
        return NULL;
    PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype);
    if (dims == NULL || dtype == NULL || !PyTuple_CheckExact(dims) || element_key(key, dims) <= 0 ||
        on_host(device) <= 0)
        return NULL;
    PyObject *element_shape = PyDict_GetItemWithError(element_shapes, dtype);
    if (element_shape == NULL) {
        if (PyErr_Occurred()) return NULL;
        element_shape = PyObject_CallFunctionObjArgs((PyObject *)shape_type, empty_tuple, dtype, NULL);
        if (element_shape == NULL || PyDict_SetItem(element_shapes, dtype, element_shape)) {
            Py_XDECREF(element_shape);
            return NULL;
        }
        Py_DECREF(element_shape); /* the dict holds it */
    }
    PyObject *item = PyObject_GetItem(buffer, key);
    PyObject *value = item == NULL ? NULL : PyObject_CallOneArg(to_array, item);
    Py_XDECREF(item);
    if (value == NULL) return NULL;
    PyObject *found = ready_node(value, element_shape, device);
    Py_DECREF(value);
    if (found == NULL) return NULL;
    Py_SETREF(SLOT(found, off_owned), Py_NewRef(Py_True));
    PyObject *result = PyObject_CallOneArg((PyObject *)element_array_type, found);
    Py_DECREF(found);
    return result;
}

/* The element of a computed host array that ``key`` (an int per dimension, in range)
   picks, as a new Array of its own 0-d buffer (``HostTransfers.load_element``'s copy, on
   the node's device); NULL without an error where the key or the array is of another kind. */
static PyObject *element(Handle *self, PyObject *key) {
    PyObject *node = self->node;
    /* a subclass (an exported array's ``Pinned``) reads its node through its own property */
    if (!Py_IS_TYPE(self, element_array_type) || node == NULL || !Py_IS_TYPE(node, node_type)) return NULL;
    Py_INCREF(node); /* its slots stay while a device's ``transfers`` runs Python code */
    PyObject *found = element_of(node, key);
    Py_DECREF(node);
    return found;
}

/* ``x[key]``: an element of a computed host array in C, any other key as Array._getitem. */
static PyObject *handle_subscript(PyObject *self, PyObject *key) {
    if (getitem_in_python == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure_elements was not called");
        return NULL;
    }
    PyObject *found = element((Handle *)self, key);
    if (found != NULL || PyErr_Occurred()) return found;
    if (subscript_window != NULL && Py_IS_TYPE(self, element_array_type) &&
        (PySlice_Check(key) || PyTuple_CheckExact(key) || PyLong_CheckExact(key))) {
        /* a window or a row: views.getitem asks the Window first for these keys, so asking it
           here first skips Array._getitem and views.getitem (~0.6 us of a window) */
        PyObject *call[] = {self, key};
        found = PyObject_Vectorcall(subscript_window, call, 2, NULL);
        if (found != Py_None) return found;
        Py_DECREF(found);
    }
    return PyObject_CallFunctionObjArgs(getitem_in_python, self, key, NULL);
}

/* How many ints ``key`` (an int, or a tuple of ints and slices) starts with. */
static Py_ssize_t leading_ints(PyObject *key) {
    if (!PyTuple_CheckExact(key)) return PyLong_CheckExact(key) ? 1 : 0;
    Py_ssize_t n = 0;
    while (n < PyTuple_GET_SIZE(key) && PyLong_CheckExact(PyTuple_GET_ITEM(key, n))) n++;
    return n;
}

/* Whether ``part`` is ``slice(None)``, the whole axis (``Array._store``'s ``_FULL``). */
static int whole_axis(PyObject *part) {
    if (!PySlice_Check(part)) return 0;
    PySliceObject *slice = (PySliceObject *)part;
    return slice->start == Py_None && slice->stop == Py_None && slice->step == Py_None;
}

/* The dims of the block of an array of ``dims`` that ``key`` picks by basic indexing, as
   ``transfer.block_shape`` says: for each leading dimension an int in range or a slice of
   int or None bounds and step (not 0): ``m[i, :]``, ``x[1:]``, ``m[i, 2:5]``, ``m[:, j]``,
   ``x[::2]``, ``g[1:-1, 1:-1]``; ``...`` and other entries are ``Array._store``'s.
   *sliced* says whether a slice picks part of the block's elements, as ``Array._store``
   finds one after dropping the key's trailing whole axes (``m[i, :]`` is the row ``m[i]``,
   unsliced), or the key is whole axes alone (``x[:]``). A new tuple, or NULL without an
   error for any other key (-1 in *sliced* on error). */
static PyObject *block_dims(PyObject *key, PyObject *dims, int *sliced) {
    *sliced = 0;
    Py_ssize_t rank = PyTuple_GET_SIZE(dims), n;
    PyObject *const *parts;
    if (PyTuple_CheckExact(key)) {
        parts = &PyTuple_GET_ITEM(key, 0);
        n = PyTuple_GET_SIZE(key);
    } else if (PyLong_CheckExact(key) || PySlice_Check(key)) {
        parts = &key;
        n = 1;
    } else {
        return NULL;
    }
    if (n == 0 || n > rank) return NULL;
    Py_ssize_t kept = n; /* the parts before the trailing whole axes */
    while (kept && whole_axis(parts[kept - 1])) kept--;
    PyObject *block = PyList_New(0);
    if (block == NULL) {
        *sliced = -1;
        return NULL;
    }
    int partial = kept == 0;
    for (Py_ssize_t k = 0; k < rank; k++) {
        PyObject *size_of = PyTuple_GET_ITEM(dims, k);
        if (k < n && !PySlice_Check(parts[k])) {
            int in = index_in_range(parts[k], size_of);
            if (in <= 0) {
                if (in < 0) *sliced = -1;
                Py_DECREF(block);
                return NULL;
            }
            continue;
        }
        PyObject *length = NULL;
        if (k < n) {
            PySliceObject *slice = (PySliceObject *)parts[k];
            PyObject *fields[] = {slice->start, slice->stop, slice->step};
            for (int f = 0; f < 3; f++)
                if (fields[f] != Py_None && !PyLong_CheckExact(fields[f])) {
                    Py_DECREF(block);
                    return NULL;
                }
            if (slice->step != Py_None) {
                int zero = PyObject_Not(slice->step);
                if (zero) { /* a step of 0 is an error Python's store raises */
                    if (zero < 0) *sliced = -1;
                    Py_DECREF(block);
                    return NULL;
                }
            }
            Py_ssize_t start, stop, step, size = PyLong_AsSsize_t(size_of);
            if ((size == -1 && PyErr_Occurred()) || PySlice_Unpack(parts[k], &start, &stop, &step) < 0) {
                *sliced = -1;
                Py_DECREF(block);
                return NULL;
            }
            if (k < kept) partial = 1;
            length = PyLong_FromSsize_t(PySlice_AdjustIndices(size, &start, &stop, step));
        } else {
            length = Py_NewRef(size_of);
        }
        if (length == NULL || PyList_Append(block, length)) {
            Py_XDECREF(length);
            Py_DECREF(block);
            *sliced = -1;
            return NULL;
        }
        Py_DECREF(length);
    }
    PyObject *found = PyList_AsTuple(block);
    Py_DECREF(block);
    *sliced = found == NULL ? -1 : partial;
    return found;
}

/* Whether a store into an array whose ``_base`` is ``base`` reaches nothing else: no
   family, or a family (``views.Family``) of views all gone but ``beside`` (NULL: none; the
   value a root's row is stored from, ``beside_block``) and not pinned by an export (a
   loop's ``row = m[i]`` leaves ``m`` a family once the row is gone); 0 else, -1 error. */
static int alone_in_family(PyObject *base, PyObject *beside) {
    if (base == Py_None) return 1;
    if (!Py_IS_TYPE(base, family_type)) return 0;
    PyObject *pin = PyObject_GetAttr(base, str_pin);
    if (pin == NULL) return -1;
    int pinned = pin != Py_None;
    Py_DECREF(pin);
    if (pinned) return 0;
    PyObject *views = PyObject_GetAttr(base, str_views);
    if (views == NULL) return -1;
    int alone = 1;
    if (views != Py_None) {
        if (!PyList_CheckExact(views)) alone = 0;
        for (Py_ssize_t k = 0; alone && k < PyList_GET_SIZE(views); k++) {
            PyObject *ref = PyList_GET_ITEM(views, k);
            if (!PyWeakref_CheckRef(ref)) {
                alone = 0;
                break;
            }
            PyObject *view = PyWeakref_GetObject(ref);
            alone = view == Py_None || (beside != NULL && view == beside);
        }
    }
    Py_DECREF(views);
    return alone;
}

/* The first and last element of its root that the block ``key`` (its leading ints, in
   range: ``block_dims``' unsliced keys) picks of a row-major root of ``dims``; 0, or -1 error. */
static int block_bounds(PyObject *key, PyObject *dims, long long *low, long long *high) {
    PyObject *const *parts = PyTuple_CheckExact(key) ? &PyTuple_GET_ITEM(key, 0) : &key;
    Py_ssize_t n = leading_ints(key), rank = PyTuple_GET_SIZE(dims);
    long long offset = 0, stride = 1;
    for (Py_ssize_t k = rank - 1; k >= 0; k--) {
        long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, k));
        if (size == -1 && PyErr_Occurred()) return -1;
        if (k < n) {
            long long i = PyLong_AsLongLong(parts[k]);
            if (i == -1 && PyErr_Occurred()) return -1;
            offset += (i < 0 ? i + size : i) * stride;
        }
        stride *= size;
    }
    long long count = 1;
    for (Py_ssize_t k = n; k < rank; k++) count *= PyLong_AsLongLong(PyTuple_GET_ITEM(dims, k));
    if (PyErr_Occurred()) return -1;
    *low = offset;
    *high = offset + count - 1;
    return 0;
}

/* Whether ``value`` is a view of the family ``base`` whose elements lie outside the block
   that ``key`` (ints alone) picks of the family's root of ``dims``: the family's only live
   view then, a store of it into the block (``m[i] = m[j]``: the view computed first, into
   memory of its own) changes no element another array shows, as ``views.changed`` would
   find; 0 else (an overlap: the view ``x[i]`` of ``x[i] += v``, Python's), -1 error. */
static int beside_block(PyObject *base, PyObject *value, PyObject *key, PyObject *dims) {
    if (view_of_type == NULL || !Py_IS_TYPE(value, element_array_type)) return 0;
    PyObject *record = ((Handle *)value)->base;
    if (record == NULL || !Py_IS_TYPE(record, view_of_type)) return 0;
    PyObject *family = PyObject_GetAttr(record, str_family);
    if (family == NULL) return -1;
    int same = family == base;
    Py_DECREF(family);
    if (!same) return 0;
    long long low, high;
    if (block_bounds(key, dims, &low, &high)) return -1;
    if (high < low) return 0;
    PyObject *layout = PyObject_CallMethodNoArgs(record, str_layout);
    PyObject *bounds = layout == NULL ? NULL : PyObject_CallMethodNoArgs(layout, str_bounds);
    Py_XDECREF(layout);
    if (bounds == NULL) return -1;
    int outside = 0;
    if (PyTuple_CheckExact(bounds) && PyTuple_GET_SIZE(bounds) == 2) {
        PyObject *first = PyLong_FromLongLong(low), *last = PyLong_FromLongLong(high);
        /* the view's last element before the block's first, or its first after the block's last */
        outside = first == NULL || last == NULL ? -1 : PyObject_RichCompareBool(PyTuple_GET_ITEM(bounds, 1), first, Py_LT);
        if (outside == 0) outside = PyObject_RichCompareBool(PyTuple_GET_ITEM(bounds, 0), last, Py_GT);
        Py_XDECREF(first);
        Py_XDECREF(last);
    }
    Py_DECREF(bounds);
    return outside;
}

/* Whether nothing but the one array on ``node`` sees ``buffer``: an executable made it
   (``owned``), the array alone holds the node and the node alone the buffer
   (``array._sole_owner``, by the reference counts themselves in C). */
static int sole_owner(PyObject *node, PyObject *buffer) {
    if (SLOT(node, off_owned) != Py_True || Py_REFCNT(node) != 1 || Py_REFCNT(buffer) != 1) return 0;
    PyObject *arrays = SLOT(node, off_arrays);
    return arrays != NULL && PyLong_CheckExact(arrays) && PyLong_AsLong(arrays) == 1;
}

/* How many values this thread read, as ``node.value_read`` counts them and ``node.reads_mark``
   tells (their definitions with this module: count_read and reads_mark). A thread's own in C,
   where a ``threading.local``'s attribute counted in Python took ~0.1 us of each read and a
   call into Python for it another ~0.1. */
static _Thread_local unsigned long long reads_counted;

static PyObject *count_read(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    reads_counted++;
    Py_RETURN_NONE;
}

static PyObject *reads_mark(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
    return PyLong_FromUnsignedLongLong(reads_counted);
}

/* ``value`` (a reference the caller gives up) once a value read is counted (``count_read``). */
static PyObject *counted_read(PyObject *value) {
    reads_counted++;
    return value;
}

/* What ``Array._store`` stores into the block of ``node``'s buffer of dims ``block`` for
   ``value``, as a new reference (``_block_value``, ``HostTransfers.store_element``'s
   rules): a Python scalar that the dtype takes exactly (``EXACT_SCALARS``'s rules: any, or
   an int's range; a single-precision test is Python's), or the buffer of an Array of the
   node's dtype and device, 0-d or of the block's dims: computed, the scalar tier's
   (``scalars.evaluate``: the element read plus 1), or computed now (``Array._computed``);
   NULL without an error for anything else. It may run Python code, so it comes before the
   store's checks. */
static PyObject *stored_value(PyObject *node, PyObject *value, PyObject *block) {
    PyObject *shape = SLOT(node, off_shape);
    PyObject *dtype = SLOT(shape, off_dtype);
    if (PyFloat_CheckExact(value) || PyLong_CheckExact(value) || PyBool_Check(value) || PyComplex_CheckExact(value)) {
        PyObject *rules = PyDict_GetItemWithError(exact_scalars, dtype);
        PyObject *rule = rules == NULL || !PyDict_Check(rules) ? NULL :
                         PyDict_GetItemWithError(rules, (PyObject *)Py_TYPE(value));
        if (rule == NULL) return NULL;
        if (rule == Py_True) return Py_NewRef(value);
        if (!PyTuple_CheckExact(rule) || PyTuple_GET_SIZE(rule) != 2) return NULL; /* a float's test: Python's */
        int low = PyObject_RichCompareBool(PyTuple_GET_ITEM(rule, 0), value, Py_LE);
        int high = low == 1 ? PyObject_RichCompareBool(value, PyTuple_GET_ITEM(rule, 1), Py_LE) : low;
        return high == 1 ? Py_NewRef(value) : NULL;
    }
    if (!Py_IS_TYPE(value, element_array_type)) return NULL;
    PyObject *given = ((Handle *)value)->node;
    if (given == NULL || !Py_IS_TYPE(given, node_type) || SLOT(given, off_device) != SLOT(node, off_device)) return NULL;
    PyObject *given_shape = SLOT(given, off_shape);
    if (given_shape == NULL || !Py_IS_TYPE(given_shape, shape_type)) return NULL;
    PyObject *given_dims = SLOT(given_shape, off_dims);
    if (given_dims == NULL || !PyTuple_CheckExact(given_dims)) return NULL;
    int fits = PyTuple_GET_SIZE(given_dims) ? PyObject_RichCompareBool(given_dims, block, Py_EQ) : 1;
    if (fits != 1) return NULL;
    int same = PyObject_RichCompareBool(SLOT(given_shape, off_dtype), dtype, Py_EQ);
    if (same != 1) return NULL;
    PyObject *buffer = SLOT(given, off_buffer);
    if (buffer == Py_None && !PyTuple_GET_SIZE(given_dims)) {
        PyObject *found = PyObject_CallOneArg(scalar_value_fn, given);
        if (found == NULL) return NULL;
        if (PyFloat_CheckExact(found) || PyLong_CheckExact(found) || PyBool_Check(found)) {
            /* evaluated in C: its dtype's value exactly, which the store keeps */
            return counted_read(found);
        }
        PyObject *kind = Py_IS_TYPE(found, ndarray_type) ? PyObject_GetAttrString(found, "dtype") : NULL;
        same = kind == NULL ? (PyErr_Occurred() ? -1 : 0) : PyObject_RichCompareBool(kind, dtype, Py_EQ);
        Py_XDECREF(kind);
        if (same == 1) return counted_read(found); /* a value read, as ``_computed`` counts one */
        Py_DECREF(found);
        if (same < 0 || PyErr_Occurred()) return NULL;
    }
    if (buffer == Py_None) { /* its graph runs: a value read (``_computed``) */
        PyObject *computed = PyObject_CallMethodNoArgs(value, str_computed);
        if (computed == NULL) return NULL;
        if (!Py_IS_TYPE(computed, node_type)) {
            Py_DECREF(computed);
            return NULL;
        }
        buffer = SLOT(computed, off_buffer);
        PyObject *found = buffer != NULL && Py_IS_TYPE(buffer, ndarray_type) ? Py_NewRef(buffer) : NULL;
        Py_DECREF(computed);
        return found;
    }
    if (!Py_IS_TYPE(buffer, ndarray_type)) return NULL;
    return counted_read(Py_NewRef(buffer));
}

/* Acquires `lock` (its acquire method: a threading lock's, blocking): 0, or -1 with the
   error set (an interrupt while waiting). */
static int lock_acquire(PyObject *lock) {
    PyObject *got = PyObject_CallMethodNoArgs(lock, str_acquire);
    Py_XDECREF(got);
    return got == NULL ? -1 : 0;
}

/* Releases `lock`, with an error set before it kept aside meanwhile and restored after
   (0); -1 where the release itself failed, its error then the one set. */
static int lock_release(PyObject *lock) {
    PyObject *error_type, *error_value, *error_traceback;
    PyErr_Fetch(&error_type, &error_value, &error_traceback);
    PyObject *released = PyObject_CallMethodNoArgs(lock, str_release);
    if (released == NULL) {
        Py_XDECREF(error_type);
        Py_XDECREF(error_value);
        Py_XDECREF(error_traceback);
        return -1;
    }
    Py_DECREF(released);
    PyErr_Restore(error_type, error_value, error_traceback);
    return 0;
}

/* ``x[key] = value`` for an element or a block that ints and slices pick (``block_dims``),
   of an array that alone holds its buffer (``Array._store``'s in-place store,
   ``HostTransfers.store_element``):
   1 stored, 0 another kind of store, -1 error. No Python code runs between the
   ownership's checks and the store: another thread's store of the same array holds its
   node (a reference more), so none is lost. */
static int store_element(Handle *self, PyObject *key, PyObject *value) {
    PyObject *node = self->node;
    if (!Py_IS_TYPE(self, element_array_type) || node == NULL || !Py_IS_TYPE(node, node_type)) return 0;
    /* a view, or a root others see: Python's, which reaches them; but for a root whose one
       live view is the value, apart from the block (``m[i] = m[j]``: ``beside``) */
    int alone = alone_in_family(self->base, NULL);
    if (alone < 0) return -1;
    if (tracing_globals != NULL) { /* while a trace is on: Python's store, which checks what it writes */
        int tracing = tracing_now();
        if (tracing) return tracing < 0 ? -1 : 0;
    }
    PyObject *buffer = SLOT(node, off_buffer), *shape = SLOT(node, off_shape);
    if (buffer == NULL || !Py_IS_TYPE(buffer, ndarray_type) || shape == NULL || !Py_IS_TYPE(shape, shape_type)) return 0;
    PyObject *dims = SLOT(shape, off_dims);
    if (dims == NULL || !PyTuple_CheckExact(dims)) return 0;
    int sliced;
    PyObject *block = block_dims(key, dims, &sliced);
    if (block == NULL) return sliced < 0 ? -1 : 0;
    PyObject *beside = NULL;
    if (!alone) {
        int apart = sliced ? 0 : beside_block(self->base, value, key, dims);
        if (apart > 0) alone = alone_in_family(self->base, value);
        if (apart <= 0 || alone <= 0) {
            Py_DECREF(block);
            return apart < 0 || alone < 0 ? -1 : 0;
        }
        beside = value;
    }
    if (sliced && !sole_owner(node, buffer)) {
        /* a slice of an array others see (a pending reader: the value's own graph,
           ``x[:5] = sin(x)[:5]``) is an update fused with the value's graph (``Array._store``) */
        Py_DECREF(block);
        return 0;
    }
    Py_INCREF(node); /* held while Python code runs (another thread's too), let go after */
    Py_INCREF(buffer);
    int host = on_host(SLOT(node, off_device));
    PyObject *stored = host == 1 ? stored_value(node, value, block) : NULL;
    Py_DECREF(block);
    /* the lock is held from the checks to the end of the store, as ``Array._setitem`` holds
       it: NumPy copies a large block with the GIL released, and another thread's store
       meanwhile (into a copy, where a pending reader sees the buffer) would copy a
       half-written block */
    int locked = stored != NULL && lock_acquire(stores_lock) == 0;
    /* the array may have taken another node meanwhile: then nothing is stored here (and
       letting go of the old one may run code); else letting go frees nothing */
    int same = locked && self->node == node && SLOT(node, off_buffer) == buffer;
    Py_DECREF(buffer);
    Py_DECREF(node);
    if (!locked) {
        Py_XDECREF(stored);
        return PyErr_Occurred() ? -1 : 0;
    }
    /* checked under the lock, after the value was made (which may have made views) */
    int status = same ? alone_in_family(self->base, beside) : 0;
    if (status > 0) status = sole_owner(node, buffer) ? (PyObject_SetItem(buffer, key, stored) ? -1 : 1) : 0;
    Py_DECREF(stored);
    return lock_release(stores_lock) ? -1 : status;
}

/* ``x[key] = value``: an element or a block of an array nobody else sees, in C; any other
   store as Array._setitem. */
static int handle_ass_subscript(PyObject *self, PyObject *key, PyObject *value) {
    if (setitem_in_python == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure_elements was not called");
        return -1;
    }
    if (value == NULL) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements"); /* NumPy's error */
        return -1;
    }
    int stored = store_element((Handle *)self, key, value);
    if (stored) return stored < 0 ? -1 : 0;
    PyObject *done = PyObject_CallFunctionObjArgs(setitem_in_python, self, key, value, NULL);
    Py_XDECREF(done);
    return done == NULL ? -1 : 0;
}

static PyMappingMethods handle_mapping = {.mp_subscript = handle_subscript, .mp_ass_subscript = handle_ass_subscript};

/* ``float(x)``, ``int(x)``, ``bool(x)`` and ``operator.index(x)`` of a computed 0-d host
   array, read in C as ``Array._scalar`` reads it (the buffer's ``item``, a value read
   counted), or of a pending one the scalar tier evaluates in C: a loop's ``float(x[i])``
   took two Python frames (~0.5 us) after the element's read. Any other array (pending
   otherwise, on a device, not 0-d, a subclass) and any value whose
   conversion says more (an int of a float's NaN or infinity, an index of a float) goes to
   ``Array``'s Python method, the definition (``configure_scalar_reads``). */
static PyObject *float_in_python, *int_in_python, *bool_in_python, *index_in_python;
static PyObject *str_item;

static PyObject *configure_scalar_reads(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *to_float, *to_int, *to_bool, *to_index;
    if (!PyArg_ParseTuple(args, "OOOO", &to_float, &to_int, &to_bool, &to_index)) return NULL;
    Py_XSETREF(float_in_python, Py_NewRef(to_float));
    Py_XSETREF(int_in_python, Py_NewRef(to_int));
    Py_XSETREF(bool_in_python, Py_NewRef(to_bool));
    Py_XSETREF(index_in_python, Py_NewRef(to_index));
    Py_RETURN_NONE;
}

/* The scalar tier's value of the pending 0-d ``node`` where C evaluated it (a Python
   scalar: ``scalars.evaluate``), its read counted: 1. 0 where the tier has no value (its
   graph is to run), 2 where Python's has (a NumPy value: Python's method says what it
   is), -1 on error. */
static int scalar_tier_item(PyObject *node, PyObject **item) {
    *item = NULL;
    if (scalar_value_fn == NULL) return 2;
    Py_INCREF(node);
    PyObject *found = PyObject_CallOneArg(scalar_value_fn, node);
    Py_DECREF(node);
    if (found == NULL) return -1;
    if (found == Py_None) {
        Py_DECREF(found);
        return 0;
    }
    if (!PyFloat_CheckExact(found) && !PyLong_CheckExact(found) && !PyBool_Check(found)) {
        Py_DECREF(found);
        return 2;
    }
    *item = counted_read(found);
    return *item == NULL ? -1 : 1;
}

static PyObject *read_node(PyObject *self, PyObject *node);
static PyObject *reads_lock; /* configure_reads' (below) */

/* ``Array._computed`` of the array ``self``, its node's value: a view's and any array's
   while reads are not configured by that method, the others' by ``read_node`` after
   counting the read (``value_read``), as the method does. */
static PyObject *read_value(PyObject *self) {
    PyObject *base = ((Handle *)self)->base;
    if (reads_lock == NULL || view_of_type == NULL || (base != NULL && Py_IS_TYPE(base, view_of_type)))
        return PyObject_CallMethodNoArgs(self, str_computed);
    reads_counted++;
    PyObject *node = Py_NewRef(((Handle *)self)->node);
    PyObject *done = read_node(NULL, node);
    Py_DECREF(node);
    return done;
}

/* The element of a 0-d host array ``self`` (a new reference, its read counted): computed,
   the scalar tier's, or computed now (``Array._computed``: its graph runs), as
   ``Array._scalar`` takes it; NULL with an error set, or without for an array or a value
   of another kind (Python's method then). */
static PyObject *computed_item(PyObject *self) {
    if (element_array_type == NULL || !Py_IS_TYPE(self, element_array_type)) return NULL;
    PyObject *node = ((Handle *)self)->node;
    if (node == NULL || !Py_IS_TYPE(node, node_type)) return NULL;
    PyObject *buffer = SLOT(node, off_buffer), *shape = SLOT(node, off_shape);
    if (buffer == NULL || shape == NULL || !Py_IS_TYPE(shape, shape_type)) return NULL;
    PyObject *dims = SLOT(shape, off_dims);
    if (dims == NULL || !PyTuple_CheckExact(dims) || PyTuple_GET_SIZE(dims)) return NULL;
    int counted = 0; /* ``_computed`` counts the read it makes */
    if (buffer == Py_None) {
        PyObject *item;
        int found = scalar_tier_item(node, &item);
        if (found != 0) return item; /* the tier's, an error, or Python's */
        if (tracing_globals != NULL) { /* while a trace is on: Python's, whose error names the read */
            int tracing = tracing_now();
            if (tracing) return NULL;
        }
        PyObject *computed = read_value(self);
        if (computed == NULL) return NULL;
        Py_DECREF(computed);
        counted = 1;
        node = ((Handle *)self)->node;
        if (node == NULL || !Py_IS_TYPE(node, node_type)) return NULL;
        buffer = SLOT(node, off_buffer);
    }
    if (buffer == NULL || !Py_IS_TYPE(buffer, ndarray_type)) return NULL;
    Py_INCREF(node); /* held while a device's ``transfers`` and the item's call run */
    int host = on_host(SLOT(node, off_device));
    buffer = SLOT(node, off_buffer);
    PyObject *item = host == 1 && buffer != NULL && Py_IS_TYPE(buffer, ndarray_type)
                         ? PyObject_CallMethodNoArgs(buffer, str_item) : NULL;
    Py_DECREF(node);
    return item == NULL || counted ? item : counted_read(item);
}

static PyObject *scalar_in_python(PyObject *method, PyObject *self) {
    if (method == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure_scalar_reads was not called");
        return NULL;
    }
    return PyObject_CallOneArg(method, self);
}

static PyObject *handle_float(PyObject *self) {
    PyObject *item = computed_item(self);
    if (item == NULL) return PyErr_Occurred() ? NULL : scalar_in_python(float_in_python, self);
    PyObject *value = PyNumber_Float(item);
    Py_DECREF(item);
    return value;
}

static PyObject *handle_int(PyObject *self) {
    PyObject *item = computed_item(self);
    if (item == NULL) return PyErr_Occurred() ? NULL : scalar_in_python(int_in_python, self);
    int plain = PyLong_Check(item) || (PyFloat_CheckExact(item) && isfinite(PyFloat_AS_DOUBLE(item)));
    PyObject *value = plain ? PyNumber_Long(item) : scalar_in_python(int_in_python, self);
    Py_DECREF(item);
    return value;
}

static PyObject *handle_index(PyObject *self) {
    PyObject *item = computed_item(self);
    if (item == NULL) return PyErr_Occurred() ? NULL : scalar_in_python(index_in_python, self);
    if (PyLong_CheckExact(item)) return item; /* an integer dtype's (a bool's is Python's error) */
    Py_DECREF(item);
    return scalar_in_python(index_in_python, self);
}

static int handle_bool(PyObject *self) {
    PyObject *item = computed_item(self);
    if (item == NULL && PyErr_Occurred()) return -1;
    PyObject *value = item != NULL ? Py_NewRef(item) : scalar_in_python(bool_in_python, self);
    Py_XDECREF(item);
    if (value == NULL) return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

static PyNumberMethods handle_number = {
    .nb_bool = handle_bool, .nb_int = handle_int, .nb_float = handle_float, .nb_index = handle_index};

static PyMemberDef handle_members[] = {
    {"_node", T_OBJECT_EX, offsetof(Handle, node), 0, "The node this array is a handle on."},
    {"_base", T_OBJECT, offsetof(Handle, base), 0, "For a view: [its base (weakly), the key, the node written back]."},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject handle_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.ArrayHandle",
    .tp_doc = "The base of Array: a node and the count of arrays on it.",
    .tp_basicsize = sizeof(Handle),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)handle_init,
    .tp_dealloc = (destructor)handle_dealloc,
    .tp_traverse = (traverseproc)handle_traverse,
    .tp_clear = (inquiry)handle_clear,
    .tp_members = handle_members,
    .tp_as_mapping = &handle_mapping,
    .tp_as_number = &handle_number,
};


/* --- replay ---------------------------------------------------------------------------- */

/* A ready node of ``buffer``, ``shape`` and ``device``, as Node.ready makes one. */
static PyObject *ready_node(PyObject *buffer, PyObject *shape, PyObject *device) {
    PyObject *attrs = PyDict_New();
    if (attrs == NULL) return NULL;
    PyObject *node = new_node(Py_None, empty_tuple, attrs, shape, buffer, Py_NewRef(zero), device);
    Py_DECREF(attrs);
    return node;
}

/* Where an ndarray object keeps its flags word (transfer.FLAGS_OFFSET, configure_windows), and
   NumPy's bit for a writeable array; -1 until configured, where shared_window makes no window. */
static Py_ssize_t flags_offset = -1;
static int writeable_flag;

/* node.shared_window in C, for a dynamic_slice whose operands are all ready (``derive``), as
   HostTransfers.shared_window decides and makes it: a ready node viewing a contiguous window
   of a read-only host buffer that no update owns, which keeps the op's operands and attributes
   (a recipe makes it again of its call's own, api.recipes._steps); NULL with no error where the op is
   recorded, NULL with an error on one. Made here, as a Python call it cost a window ~1.7 us
   more than its record (a loop's small windows were slower to record than to copy). */
static PyObject *shared_window(PyObject *operands, PyObject *attrs, PyObject *shape, PyObject *device) {
    Py_ssize_t rank = PyTuple_GET_SIZE(operands) - 1;
    if (rank < 1 || rank > 8 || ndarray_type == NULL || flags_offset < 0) return NULL;
    PyObject *base = PyTuple_GET_ITEM(operands, 0), *buffer = SLOT(base, off_buffer);
    if (buffer == NULL || !Py_IS_TYPE(buffer, ndarray_type) || SLOT(base, off_owned) != Py_False ||
        (*(int *)((char *)buffer + flags_offset) & writeable_flag) || PyTuple_GET_SIZE(SLOT(base, off_operands)))
        return NULL; /* a window of a shared window is recorded: a loop's w = w[1:] holds no chain of nodes */
    PyObject *dims = SLOT(SLOT(base, off_shape), off_dims), *counts = SLOT(shape, off_dims);
    if (!PyTuple_CheckExact(dims) || !PyTuple_CheckExact(counts) || PyTuple_GET_SIZE(dims) != rank ||
        PyTuple_GET_SIZE(counts) != rank)
        return NULL;
    Py_ssize_t size[8], count[8], start[8];
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *at = SLOT(PyTuple_GET_ITEM(operands, i + 1), off_buffer);
        if (at == NULL || !Py_IS_TYPE(at, ndarray_type)) return NULL;
        size[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(dims, i));
        count[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(counts, i));
        start[i] = PyNumber_AsSsize_t(at, NULL);
        if (PyErr_Occurred()) {
            PyErr_Clear(); /* not a window of ours to make: the op is recorded */
            return NULL;
        }
        if (start[i] > size[i] - count[i]) start[i] = size[i] - count[i]; /* clamped as dynamic_slice clamps */
        if (start[i] < 0) start[i] = 0;
    }
    Py_ssize_t first = 0; /* contiguous where the axes past its first one of a count other than 1 are whole */
    while (first < rank && count[first] == 1) first++;
    for (Py_ssize_t i = first + 1; i < rank; i++)
        if (count[i] != size[i]) return NULL;
    PyObject *key = PyTuple_New(rank);
    if (key == NULL) return NULL;
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *low = PyLong_FromSsize_t(start[i]), *high = PyLong_FromSsize_t(start[i] + count[i]);
        PyObject *part = low == NULL || high == NULL ? NULL : PySlice_New(low, high, NULL);
        Py_XDECREF(low);
        Py_XDECREF(high);
        if (part == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, i, part);
    }
    PyObject *view = PyObject_GetItem(buffer, key);
    Py_DECREF(key);
    if (view == NULL) return NULL;
    PyObject *node = new_node(Py_None, operands, attrs, shape, view, Py_NewRef(zero), device);
    Py_DECREF(view);
    return node;
}

static PyObject *configure_windows(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t offset;
    int flag;
    if (!PyArg_ParseTuple(args, "ni", &offset, &flag)) return NULL;
    flags_offset = offset;
    writeable_flag = flag;
    Py_RETURN_NONE;
}

static PyObject *ready(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (check_configured()) return NULL;
    if (nargs != 3 || !PyObject_TypeCheck(args[1], shape_type)) {
        PyErr_SetString(PyExc_TypeError, "ready(buffer, shape: Shape, device)");
        return NULL;
    }
    return ready_node(args[0], args[1], args[2]);
}

/* The node at ``index`` of ``nodes`` (borrowed), or NULL with IndexError. */
static PyObject *numbered(PyObject *nodes, PyObject *index) {
    Py_ssize_t i = PyLong_AsSsize_t(index);
    if (i == -1 && PyErr_Occurred()) return NULL;
    if (i < 0 || i >= PyList_GET_SIZE(nodes)) {
        PyErr_SetString(PyExc_IndexError, "replay: a step takes a node not made yet");
        return NULL;
    }
    return PyList_GET_ITEM(nodes, i);
}

static PyObject *replay(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (check_configured()) return NULL;
    if (nargs != 2 || !PyTuple_Check(args[0]) || !PyList_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "replay(steps: tuple, nodes: list)");
        return NULL;
    }
    PyObject *steps = args[0], *nodes = args[1];
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(steps); k++) {
        PyObject *step = PyTuple_GET_ITEM(steps, k);
        if (!PyTuple_Check(step) || PyTuple_GET_SIZE(step) < 4 || PyTuple_GET_SIZE(step) > 5) {
            PyErr_SetString(PyExc_TypeError, "replay: a step is (op, gather, attrs, shape[, device])");
            return NULL;
        }
        PyObject *op = PyTuple_GET_ITEM(step, 0), *gather = PyTuple_GET_ITEM(step, 1),
                 *attrs = PyTuple_GET_ITEM(step, 2), *shape = PyTuple_GET_ITEM(step, 3), *node;
        if (op == Py_None) { /* (None, device, buffer, shape) */
            if (!PyObject_TypeCheck(shape, shape_type)) {
                PyErr_SetString(PyExc_TypeError, "replay: a ready step's shape must be a Shape");
                return NULL;
            }
            node = ready_node(attrs, shape, gather);
        } else {
            PyObject *operands;
            if (gather == Py_None) {
                operands = Py_NewRef(empty_tuple);
            } else if (PyLong_CheckExact(gather)) {
                PyObject *one = numbered(nodes, gather);
                operands = one == NULL ? NULL : PyTuple_Pack(1, one);
            } else if (PyTuple_Check(gather)) {
                Py_ssize_t n = PyTuple_GET_SIZE(gather);
                operands = PyTuple_New(n);
                for (Py_ssize_t i = 0; operands != NULL && i < n; i++) {
                    PyObject *o = numbered(nodes, PyTuple_GET_ITEM(gather, i));
                    if (o == NULL) Py_CLEAR(operands);
                    else PyTuple_SET_ITEM(operands, i, Py_NewRef(o));
                }
            } else {
                PyErr_SetString(PyExc_TypeError, "replay: a step gathers None, an int or a tuple of ints");
                operands = NULL;
            }
            if (operands == NULL) return NULL;
            PyObject *call[] = {op, operands, attrs, shape};
            node = derive(NULL, call, 4);
            Py_DECREF(operands);
            if (node != NULL && PyTuple_GET_SIZE(step) == 5) /* a device its code gave it (api.graph.placed) */
                Py_SETREF(SLOT(node, off_device), Py_NewRef(PyTuple_GET_ITEM(step, 4)));
        }
        if (node == NULL) return NULL;
        int failed = PyList_Append(nodes, node);
        Py_DECREF(node);
        if (failed) return NULL;
    }
    Py_RETURN_NONE;
}

/* --- capture ---------------------------------------------------------------------------- */

/* How a step takes ``operands`` (api.recipes._gather): the number of its one operand, a
   tuple of the numbers of several, None for none. NULL on error. */
static PyObject *gathered(const Map *numbers, PyObject *operands) {
    Py_ssize_t n = PyTuple_GET_SIZE(operands);
    if (n == 0) Py_RETURN_NONE;
    PyObject *taken = n == 1 ? NULL : PyTuple_New(n);
    if (n > 1 && taken == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t number = map_get(numbers, PyTuple_GET_ITEM(operands, i));
        PyObject *item = number < 0 ? NULL : PyLong_FromSsize_t(number);
        if (item == NULL) {
            if (number < 0) PyErr_SetString(PyExc_KeyError, "made_steps: an operand was never numbered");
            Py_XDECREF(taken);
            return NULL;
        }
        if (n == 1) return item;
        PyTuple_SET_ITEM(taken, i, item);
    }
    return taken;
}

/* ``made_steps(results, nodes, first)``: api.recipes._made_steps_in_python in C, a
   capture's walk from its ``results`` (nodes) down to its arguments' ``nodes``: None
   where the call met a node made before serial ``first`` (or a weak one) that is not an
   argument's, or a result is a ready node of no operands; else the shared nodes it met,
   its steps (the nodes it made, by serial, each numbered after the arguments' and the
   shared ones; a ready one as (None, its device, its buffer, its shape), an op on another
   device than ``derive`` would give it with that device last) and each result's number. In
   Python, ~11 us of each capture: a script's first run captures each signature it meets
   (~3,400 over the eager scripts' first runs). */
static PyObject *made_steps(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (check_configured()) return NULL;
    if (nargs != 3 || !PyList_Check(args[0]) || !PyList_Check(args[1]) || !PyLong_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "made_steps(results: list, nodes: list, first: int)");
        return NULL;
    }
    PyObject *results = args[0], *nodes = args[1], *out = NULL, *shared_tuple = NULL, *steps = NULL,
             *numbers_tuple = NULL;
    long long first = PyLong_AsLongLong(args[2]);
    if (first == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n_args = PyList_GET_SIZE(nodes), n_results = PyList_GET_SIZE(results);
    Map numbers; /* an argument's node: its first number; a node met: -2 until numbered */
    Nodes stack = {0}, shared = {0};
    Numbered *made = NULL;
    Py_ssize_t n_made = 0, made_capacity = 0;
    if (map_init(&numbers, MAP_START)) return NULL;
    for (Py_ssize_t i = 0; i < n_args; i++) {
        PyObject *node = PyList_GET_ITEM(nodes, i);
        if (!is_node(node)) goto done;
        if (map_get(&numbers, node) < 0 && map_set(&numbers, node, i)) goto done;
    }
    for (Py_ssize_t i = n_results - 1; i >= 0; i--) /* popped first to last, as the Python walk pops */
        if (!is_node(PyList_GET_ITEM(results, i)) || push(&stack, PyList_GET_ITEM(results, i))) goto done;
    while (stack.size) {
        PyObject *node = stack.items[--stack.size];
        if (map_get(&numbers, node) != -1) continue;
        if (map_set(&numbers, node, -2)) goto done;
        int is_result = 0;
        for (Py_ssize_t i = 0; i < n_results && !is_result; i++) is_result = PyList_GET_ITEM(results, i) == node;
        PyObject *reused = slot(node, off_reused, "reused"), *weak = slot(node, off_weak, "weak"),
                 *serial = slot(node, off_serial, "serial"), *buffer = slot(node, off_buffer, "buffer"),
                 *operands = slot(node, off_operands, "operands");
        if (reused == NULL || weak == NULL || serial == NULL || buffer == NULL || operands == NULL) goto done;
        if (reused != Py_None && !is_result) {
            if (push(&shared, node)) goto done;
            continue;
        }
        long long number = PyLong_AsLongLong(serial);
        if (number == -1 && PyErr_Occurred()) goto done;
        if (!PyTuple_Check(operands)) {
            PyErr_SetString(PyExc_TypeError, "a node's operands must be a tuple");
            goto done;
        }
        if (slot(node, off_device, "device") == NULL) goto done;
        if (number < first || weak == Py_True || (buffer != Py_None && is_result && !PyTuple_GET_SIZE(operands))) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        if (n_made == made_capacity) {
            Py_ssize_t capacity = made_capacity ? 2 * made_capacity : 16;
            Numbered *grown_made = PyMem_Realloc(made, capacity * sizeof(Numbered));
            if (grown_made == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            made = grown_made;
            made_capacity = capacity;
        }
        made[n_made].node = node;
        made[n_made++].serial = number;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(operands); j++) {
            PyObject *o = PyTuple_GET_ITEM(operands, j);
            if (!is_node(o) || push(&stack, o)) goto done;
        }
    }
    if (n_made) qsort(made, n_made, sizeof(Numbered), by_serial); /* made is NULL where it made nothing */
    Py_ssize_t number = n_args;
    shared_tuple = PyTuple_New(shared.size);
    steps = PyTuple_New(n_made);
    numbers_tuple = PyTuple_New(n_results);
    if (shared_tuple == NULL || steps == NULL || numbers_tuple == NULL) goto done;
    for (Py_ssize_t i = 0; i < shared.size; i++) {
        PyTuple_SET_ITEM(shared_tuple, i, Py_NewRef(shared.items[i]));
        if (map_set(&numbers, shared.items[i], number++)) goto done;
    }
    for (Py_ssize_t i = 0; i < n_made; i++)
        if (map_set(&numbers, made[i].node, number++)) goto done;
    for (Py_ssize_t i = 0; i < n_made; i++) {
        PyObject *node = made[i].node, *buffer = SLOT(node, off_buffer), *operands = SLOT(node, off_operands);
        PyObject *shape = slot(node, off_shape, "shape"), *step;
        if (shape == NULL) goto done;
        if (buffer != Py_None && !PyTuple_GET_SIZE(operands)) {
            step = PyTuple_Pack(4, Py_None, SLOT(node, off_device), buffer, shape);
        } else {
            PyObject *op = buffer != Py_None ? str_dynamic_slice : slot(node, off_op, "op");
            PyObject *attrs = slot(node, off_attrs, "attrs");
            if (op == NULL || attrs == NULL) goto done;
            PyObject *gather = gathered(&numbers, operands);
            if (gather == NULL) goto done;
            PyObject *device = SLOT(node, off_device), *derived;
            step = common_device(op, operands, &derived) ? NULL
                   : device == derived ? PyTuple_Pack(4, op, gather, attrs, shape)
                                       : PyTuple_Pack(5, op, gather, attrs, shape, device);
            Py_DECREF(gather);
        }
        if (step == NULL) goto done;
        PyTuple_SET_ITEM(steps, i, step);
    }
    for (Py_ssize_t i = 0; i < n_results; i++) {
        Py_ssize_t at = map_get(&numbers, PyList_GET_ITEM(results, i));
        PyObject *item = at < 0 ? NULL : PyLong_FromSsize_t(at);
        if (item == NULL) {
            if (at < 0) PyErr_SetString(PyExc_KeyError, "made_steps: a result was never numbered");
            goto done;
        }
        PyTuple_SET_ITEM(numbers_tuple, i, item);
    }
    out = PyTuple_Pack(3, shared_tuple, steps, numbers_tuple);
done:
    map_free(&numbers);
    PyMem_Free(stack.items);
    PyMem_Free(shared.items);
    PyMem_Free(made);
    Py_XDECREF(shared_tuple);
    Py_XDECREF(steps);
    Py_XDECREF(numbers_tuple);
    return out;
}

/* --- Elementwise ----------------------------------------------------------------------- */

/* An elementwise function (or operator) of one HLO op, recording its common cases as
   api.elementwise's Python function does: an array and an array of the same shape and
   dtype, an array and a Python int or float that takes the array's dtype, an array alone.
   Each is derive() of the op over the operands' nodes (the scalar's node the one
   api.graph.scalar_operand reuses), and the result's Array, as graph.wrap makes it. Any
   other call, and any of these where a table has no entry for the dtype, is the Python
   function's: ``fallback``, called with the arguments as given. Recording ``x * 0.5`` in
   Python took 2.3 us, most of it four calls deciding the same things every time. */

static PyTypeObject *array_type;    /* trace.array.Array */
static PyObject *reused_scalars;    /* api.graph.REUSED_SCALARS */
static PyObject *scalar_operand_fn; /* api.graph.scalar_operand */
static PyObject *wrap_fn;           /* api.graph.wrap: cuts a graph deeper than the bound */
static PyObject *node_globals;      /* trace.node's namespace: MAX_PENDING, read per call */
static PyObject *made_scalars;      /* api.graph.MADE_IN_C: (type, dtype) -> the value's 0-d Shape */
static PyObject *make_array;        /* numpy.array */
static Py_ssize_t reused_scalars_max; /* api.graph.REUSED_SCALARS_MAX */
static PyObject *str_max_pending, *str_active, *str_hex;

static PyObject *configure_elementwise(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *array, *reused, *operand, *wrap, *node_ns, *tracing_ns, *made, *make;
    Py_ssize_t reused_max;
    if (!PyArg_ParseTuple(args, "O!O!OOO!O!O!On", &PyType_Type, &array, &PyDict_Type, &reused, &operand, &wrap,
                          &PyDict_Type, &node_ns, &PyDict_Type, &tracing_ns, &PyDict_Type, &made, &make, &reused_max))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)array, &handle_type)) {
        PyErr_SetString(PyExc_TypeError, "configure_elementwise: the array type must derive from ArrayHandle");
        return NULL;
    }
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(array));
    Py_XSETREF(reused_scalars, Py_NewRef(reused));
    Py_XSETREF(scalar_operand_fn, Py_NewRef(operand));
    Py_XSETREF(wrap_fn, Py_NewRef(wrap));
    Py_XSETREF(node_globals, Py_NewRef(node_ns));
    Py_XSETREF(tracing_globals, Py_NewRef(tracing_ns));
    Py_XSETREF(made_scalars, Py_NewRef(made));
    Py_XSETREF(make_array, Py_NewRef(make));
    reused_scalars_max = reused_max;
    Py_RETURN_NONE;
}

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *op, *where, *attrs; /* the HLO op and its attributes; the function's name, for messages */
    PyObject *same;               /* operands' dtype -> result dtype, for arrays alone */
    PyObject *with_int, *with_float; /* the same, for an array with a Python int, a float */
    PyObject *fallback;
    PyObject *dict;
    int arity, reflected; /* reflected: 0, 1 (``__radd__``) or IN_PLACE (``__iadd__``) */
} Elementwise;

#define IN_PLACE 2

static PyObject *NOT_HANDLED_MARK; /* a sentinel: the call is the fallback's */

/* The Array of a node just recorded: graph.wrap's where the node is deeper than the
   pending bound (it may cut there), else made as ArrayHandle's __init__ makes it. */
/* The pending bound (trace.node.MAX_PENDING, read per call: tests and settings change it)
   in ``limit``; -1 on error. */
static int pending_limit(long long *limit) {
    PyObject *bound = PyDict_GetItemWithError(node_globals, str_max_pending);
    if (bound == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "trace.node.MAX_PENDING is missing");
        return -1;
    }
    *limit = PyLong_AsLongLong(bound);
    return *limit == -1 && PyErr_Occurred() ? -1 : 0;
}

static PyObject *wrapped(PyObject *node) {
    long long limit, depth;
    if (pending_limit(&limit) < 0) {
        Py_DECREF(node);
        return NULL;
    }
    depth = PyLong_AsLongLong(SLOT(node, off_depth));
    if (PyErr_Occurred()) {
        Py_DECREF(node);
        return NULL;
    }
    if (limit > 0 && depth > limit) {
        PyObject *array = PyObject_CallOneArg(wrap_fn, node);
        Py_DECREF(node);
        return array;
    }
    if (add_to_arrays(node, 1)) {
        Py_DECREF(node);
        return NULL;
    }
    Handle *array = (Handle *)array_type->tp_alloc(array_type, 0);
    if (array == NULL) {
        add_to_arrays(node, -1);
        Py_DECREF(node);
        return NULL;
    }
    array->node = node; /* the reference derive gave */
    array->base = Py_NewRef(Py_None);
    return (PyObject *)array;
}

static PyObject *str_broadcast_in_dim, *str_broadcast_dimensions, *str_dims;

/* The broadcast of ``scalar``, a value's reused 0-d node, to ``shape`` (of ``dims`` and
   ``dtype``), marked reused as api.graph.scalar_operand marks its broadcasts: a window of
   a new length meets a scalar it met at other lengths (``w * 2.0``), and scalar_operand
   made it in Python, 3 us, ten times the op's recording. It is not added to
   api.graph.REUSED_SCALARS (scalar_cache holds it for this Shape): a loop over new
   lengths would fill that table, and each length is met once. */
static PyObject *spread_scalar(PyObject *scalar, PyObject *shape, PyObject *dims, PyObject *dtype) {
    PyObject *attrs = PyDict_New(), *none = PyTuple_New(0), *on = NULL, *node = NULL;
    if (attrs != NULL && none != NULL && PyDict_SetItem(attrs, str_dims, dims) == 0 &&
        PyDict_SetItem(attrs, str_broadcast_dimensions, none) == 0 && (on = PyTuple_Pack(1, scalar)) != NULL) {
        PyObject *args[] = {str_broadcast_in_dim, on, attrs, shape};
        node = derive(NULL, args, 4);
    }
    if (node != NULL) { /* (op, attr_key(attrs), dims, dtype), as scalar_operand marks it */
        PyObject *reused = Py_BuildValue("(O((OO)(OO))OO)", str_broadcast_in_dim, str_broadcast_dimensions, none,
                                         str_dims, dims, dims, dtype);
        if (reused == NULL) Py_CLEAR(node);
        else Py_SETREF(SLOT(node, off_reused), reused);
    }
    Py_XDECREF(attrs);
    Py_XDECREF(none);
    Py_XDECREF(on);
    return node;
}

/* The reused nodes last met, by the scalar's type and bits and the Shape object (held, so
   its address is not another's): a loop's ``x * 0.5`` finds its node without making the
   dictionary's key (a tuple, the float's hex(), the dims' hash), which was half of
   recording it. An entry holds a node that scalar_operand made and marked reused, or for
   a 0-d Shape the value's reused 0-d node, whose buffer each 0-d operand's node shares;
   nothing computes, stores into or updates either. An entry is replaced by the next
   scalar that maps to its place, so at most SCALAR_CACHE are held. */
#define SCALAR_CACHE 64
typedef struct {
    PyTypeObject *type;
    long long bits;
    PyObject *shape, *node;
} ScalarEntry;
static ScalarEntry scalar_cache[SCALAR_CACHE];

/* The reused node of a Python int or float at ``shape`` (api.graph.scalar_operand's,
   found in ``scalar_cache`` or looked up as it looks it up; made by it where it has none,
   and while a trace is on); at a 0-d ``shape``, a ready node of its own holding the
   buffer of the value's reused 0-d node (each use a parameter of its graph, so which
   scalars are equal never changes a graph's structure). */
/* Whether a trace is on (trace.tracing._ACTIVE): 1, 0, -1 on error. */
static int tracing_now(void) {
    PyObject *active = PyDict_GetItemWithError(tracing_globals, str_active);
    if (active == NULL && PyErr_Occurred()) return -1;
    return active == NULL || !PyLong_CheckExact(active) || PyLong_AsLong(active) != 0;
}

/* The value's reused 0-d node (new), made here as api.graph._scalar_node makes it where
   api.graph.MADE_IN_C takes its type and ``dtype`` (a 0-d array of it, ``numpy.array(value,
   dtype)``) and entered in api.graph.REUSED_SCALARS under ``value_key``; NULL without an
   error where MADE_IN_C does not take them, or ``overflow`` (an int past int64's range,
   which scalar_operand's checks decide). A loop's ``x / n`` or ``x > t`` meets a new value
   at each step: scalar_operand's Python path took ~3.5 us of it. */
static PyObject *made_scalar(PyObject *value, PyObject *dtype, PyObject *value_key, int overflow) {
    if (made_scalars == NULL || overflow) return NULL;
    PyObject *pair = PyTuple_Pack(2, (PyObject *)Py_TYPE(value), dtype);
    if (pair == NULL) return NULL;
    PyObject *zero_d_shape = PyDict_GetItemWithError(made_scalars, pair);
    Py_DECREF(pair);
    if (zero_d_shape == NULL || !PyObject_TypeCheck(zero_d_shape, shape_type)) return NULL;
    PyObject *args[] = {value, dtype};
    PyObject *buffer = PyObject_Vectorcall(make_array, args, 2, NULL);
    if (buffer == NULL) return NULL;
    PyObject *scalar = ready_node(buffer, zero_d_shape, Py_None);
    Py_DECREF(buffer);
    if (scalar == NULL) return NULL;
    if (PyDict_GET_SIZE(reused_scalars) >= reused_scalars_max) PyDict_Clear(reused_scalars);
    if (PyDict_SetItem(reused_scalars, value_key, scalar) < 0) Py_CLEAR(scalar);
    return scalar;
}

static PyObject *scalar_node(PyObject *where, PyObject *value, PyObject *shape) {
    int tracing = tracing_now();
    if (tracing < 0) return NULL;
    PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype), *node = NULL;
    ScalarEntry *entry = NULL;
    long long bits = 0;
    int zero_d = 0; /* a 0-d operand: a ready node of its own, holding the buffer of the value's reused 0-d node */
    if (!tracing && dims != NULL && dtype != NULL && PyTuple_Check(dims)) {
        zero_d = !PyTuple_GET_SIZE(dims);
        int overflow = 0;
        if (Py_IS_TYPE(value, &PyFloat_Type)) {
            double v = PyFloat_AS_DOUBLE(value);
            memcpy(&bits, &v, sizeof bits);
        } else {
            bits = PyLong_AsLongLongAndOverflow(value, &overflow);
            if (bits == -1 && PyErr_Occurred()) return NULL;
        }
        if (!overflow) {
            uint64_t h = ((uint64_t)bits ^ ((uintptr_t)shape >> 4) ^ (uintptr_t)Py_TYPE(value)) * 0x9E3779B97F4A7C15ull;
            entry = &scalar_cache[h >> 58]; /* the top 6 bits: SCALAR_CACHE places */
            if (entry->node != NULL && entry->type == Py_TYPE(value) && entry->bits == bits && entry->shape == shape)
                return zero_d ? ready_node(SLOT(entry->node, off_buffer), shape, Py_None) : Py_NewRef(entry->node);
        }
        PyObject *hex = Py_IS_TYPE(value, &PyFloat_Type) ? PyObject_CallMethodNoArgs(value, str_hex) : Py_NewRef(Py_None);
        if (hex == NULL) return NULL;
        PyObject *key = zero_d ? PyTuple_Pack(4, (PyObject *)Py_TYPE(value), value, hex, dtype)
                               : PyTuple_Pack(5, (PyObject *)Py_TYPE(value), value, hex, dims, dtype);
        if (key == NULL) {
            Py_DECREF(hex);
            return NULL;
        }
        node = PyDict_GetItemWithError(reused_scalars, key);
        if (node == NULL && PyErr_Occurred()) {
            Py_DECREF(key);
            Py_DECREF(hex);
            return NULL;
        }
        if (zero_d && (node == NULL || !Py_IS_TYPE(node, node_type) || SLOT(node, off_buffer) == Py_None))
            node = NULL; /* scalar_operand makes it, or made_scalar */
        Py_XINCREF(node);
        if (node == NULL) { /* the value's 0-d node (a 0-d key is its key): found and spread, else made if it can be */
            PyObject *value_key = zero_d ? Py_NewRef(key)
                                         : PyTuple_Pack(4, (PyObject *)Py_TYPE(value), value, hex, dtype);
            PyObject *scalar = value_key == NULL || zero_d ? NULL : PyDict_GetItemWithError(reused_scalars, value_key);
            Py_XINCREF(scalar);
            if (scalar == NULL && value_key != NULL && !PyErr_Occurred())
                scalar = made_scalar(value, dtype, value_key, overflow);
            Py_XDECREF(value_key);
            if (scalar != NULL && Py_IS_TYPE(scalar, node_type) && SLOT(scalar, off_buffer) != Py_None)
                node = zero_d ? Py_NewRef(scalar) : spread_scalar(scalar, shape, dims, dtype);
            Py_XDECREF(scalar);
            if (PyErr_Occurred()) {
                Py_XDECREF(node);
                Py_DECREF(key);
                Py_DECREF(hex);
                return NULL;
            }
        }
        Py_DECREF(key);
        Py_DECREF(hex);
    }
    if (node == NULL) {
        PyObject *call[] = {value, shape, where};
        node = PyObject_Vectorcall(scalar_operand_fn, call, 3, NULL);
        if (node == NULL) return NULL;
        if (zero_d)
            return node; /* its value's reused node is made now: the next use finds it */
    }
    if (entry != NULL && Py_IS_TYPE(node, node_type) &&
        (zero_d || (SLOT(node, off_reused) != NULL && SLOT(node, off_reused) != Py_None))) {
        /* one scalar_operand marked reused, or a 0-d value's reused node: kept */
        PyObject *old_shape = entry->shape, *old_node = entry->node;
        entry->type = Py_TYPE(value);
        entry->bits = bits;
        entry->shape = Py_NewRef(shape);
        entry->node = Py_NewRef(node);
        Py_XDECREF(old_shape);
        Py_XDECREF(old_node);
    }
    if (zero_d) {
        PyObject *own = ready_node(SLOT(node, off_buffer), shape, Py_None);
        Py_DECREF(node);
        return own;
    }
    return node;
}

/* ``shape.with_dtype(dtype)`` for a dtype object: a Shape of its dims made here, its slots
   set as ``Shape.__init__`` sets them (a comparison's result, ``x > 0.5`` in a loop: the
   Python call was a third of recording it). */
static PyObject *with_dtype(PyObject *shape, PyObject *dtype) {
    PyObject *made = shape_type->tp_alloc(shape_type, 0);
    if (made == NULL) return NULL;
    SLOT(made, off_dims) = Py_NewRef(SLOT(shape, off_dims));
    SLOT(made, off_dtype) = Py_NewRef(dtype);
    return made;
}

/* Record the op over ``operands`` (``n`` of them, the first of shape ``shape``) with the
   result dtype ``result``, and wrap its node. */
static PyObject *record(Elementwise *self, PyObject **operands, Py_ssize_t n, PyObject *shape, PyObject *result) {
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(operands[i]));
    PyObject *out_shape = result == SLOT(shape, off_dtype) ? Py_NewRef(shape) : with_dtype(shape, result);
    if (out_shape == NULL) {
        Py_DECREF(tuple);
        return NULL;
    }
    PyObject *args[] = {self->op, tuple, self->attrs, out_shape};
    PyObject *node = derive(NULL, args, 4);
    Py_DECREF(tuple);
    Py_DECREF(out_shape);
    return node == NULL ? NULL : wrapped(node);
}

/* The node of an Array argument and its shape; 0 if the argument is no Array. */
static int array_node(PyObject *obj, PyObject **node, PyObject **shape) {
    if (Py_TYPE(obj) != array_type) return 0;
    PyObject *n = ((Handle *)obj)->node, *s;
    if (n == NULL || !Py_IS_TYPE(n, node_type) || (s = SLOT(n, off_shape)) == NULL || !Py_IS_TYPE(s, shape_type) ||
        SLOT(s, off_dtype) == NULL || SLOT(s, off_dims) == NULL)
        return 0;
    *node = n;
    *shape = s;
    return 1;
}

/* ``array_node`` of an Array that is not weakly typed (a traced Python scalar). */
static int strong_array(PyObject *obj, PyObject **node, PyObject **shape) {
    return array_node(obj, node, shape) && SLOT(*node, off_weak) == Py_False;
}

/* The result dtype ``table`` gives the dtype of ``shape`` (borrowed), NULL if none. */
static PyObject *result_of(PyObject *table, PyObject *shape) {
    return PyDict_GetItemWithError(table, SLOT(shape, off_dtype));
}

/* The op of the array ``node`` (of ``shape``) and the Python scalar ``value``, the scalar
   the first operand if ``scalar_first``; NOT_HANDLED_MARK where the scalar is no int or
   float of a kind the array's dtype takes. */
static PyObject *with_scalar(Elementwise *self, PyObject *node, PyObject *shape, PyObject *value, int scalar_first) {
    PyObject *table = Py_IS_TYPE(value, &PyFloat_Type) ? self->with_float
                      : Py_IS_TYPE(value, &PyLong_Type) ? self->with_int : NULL, *result;
    if (table == NULL || (result = result_of(table, shape)) == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    PyObject *scalar = scalar_node(self->where, value, shape);
    if (scalar == NULL) return NULL;
    PyObject *operands[] = {scalar_first ? scalar : node, scalar_first ? node : scalar};
    PyObject *out = record(self, operands, 2, shape, result);
    Py_DECREF(scalar);
    return out;
}

/* The largest rank broadcast_binary takes (the rules take the rest: a broadcast of more
   runs of axes than the installation builds is recorded a run at a time, api.graph.BUILT_RUNS). */
#define BROADCAST_RANK 5

/* The op of two arrays of one dtype whose shapes differ but broadcast together, each
   broadcast as api.elementwise.broadcast_pair broadcasts it (``x - mean(x, axis=0)``: a
   loop over new sizes misses every recipe); NOT_HANDLED_MARK for shapes that do not
   broadcast (the rules say why), a broadcast deeper than the pending bound (the rules
   decide where to cut) and while tracing (the rules' own path). */
static PyObject *broadcast_binary(Elementwise *self, PyObject *n1, PyObject *s1, PyObject *n2, PyObject *s2) {
    PyObject *result = result_of(self->same, s1);
    if (result == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    PyObject *d1 = SLOT(s1, off_dims), *d2 = SLOT(s2, off_dims);
    if (!PyTuple_CheckExact(d1) || !PyTuple_CheckExact(d2)) return NOT_HANDLED_MARK;
    Py_ssize_t r1 = PyTuple_GET_SIZE(d1), r2 = PyTuple_GET_SIZE(d2), rank = r1 > r2 ? r1 : r2;
    if (rank > BROADCAST_RANK) return NOT_HANDLED_MARK;
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *out[BROADCAST_RANK];
    int same1 = r1 == rank, same2 = r2 == rank;
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *a = i >= rank - r1 ? PyTuple_GET_ITEM(d1, i - (rank - r1)) : NULL;
        PyObject *b = i >= rank - r2 ? PyTuple_GET_ITEM(d2, i - (rank - r2)) : NULL;
        long long x = a == NULL ? 1 : PyLong_AsLongLong(a), y = b == NULL ? 1 : PyLong_AsLongLong(b);
        if (PyErr_Occurred()) return NULL;
        if (x != y && x != 1 && y != 1) return NOT_HANDLED_MARK;
        out[i] = x == 1 ? (b == NULL ? a : b) : a;
        same1 &= x == (y == 1 ? x : y);
        same2 &= y == (x == 1 ? y : x);
    }
    long long limit;
    if (pending_limit(&limit) < 0) return NULL;
    PyObject *nodes[2] = {n1, n2};
    int broadcast[2] = {!same1, !same2};
    for (int k = 0; k < 2; k++) {
        if (!broadcast[k]) continue;
        long long depth = PyLong_AsLongLong(SLOT(nodes[k], off_depth));
        if (depth == -1 && PyErr_Occurred()) return NULL;
        if (limit > 0 && depth + 1 > limit) return NOT_HANDLED_MARK;
    }
    PyObject *dims = PyTuple_New(rank), *shape = NULL, *operands[2] = {NULL, NULL}, *recorded = NULL;
    if (dims == NULL) return NULL;
    for (Py_ssize_t i = 0; i < rank; i++) PyTuple_SET_ITEM(dims, i, Py_NewRef(out[i]));
    shape = same1 ? Py_NewRef(s1) : same2 ? Py_NewRef(s2)
                  : PyObject_CallFunctionObjArgs((PyObject *)shape_type, dims, SLOT(s1, off_dtype), NULL);
    if (shape == NULL) goto done;
    for (int k = 0; k < 2; k++) {
        if (!broadcast[k]) {
            operands[k] = Py_NewRef(nodes[k]);
            continue;
        }
        Py_ssize_t own = k == 0 ? r1 : r2;
        PyObject *attrs = PyDict_New(), *axes = PyTuple_New(own), *on = NULL;
        int failed = attrs == NULL || axes == NULL;
        for (Py_ssize_t i = 0; !failed && i < own; i++) {
            PyObject *axis = PyLong_FromSsize_t(rank - own + i);
            if (axis == NULL) failed = 1;
            else PyTuple_SET_ITEM(axes, i, axis);
        }
        if (!failed && (PyDict_SetItem(attrs, str_dims, dims) || PyDict_SetItem(attrs, str_broadcast_dimensions, axes) ||
                        (on = PyTuple_Pack(1, nodes[k])) == NULL))
            failed = 1;
        if (!failed) {
            PyObject *args[] = {str_broadcast_in_dim, on, attrs, shape};
            operands[k] = derive(NULL, args, 4);
        }
        Py_XDECREF(attrs);
        Py_XDECREF(axes);
        Py_XDECREF(on);
        if (operands[k] == NULL) goto done;
    }
    recorded = record(self, operands, 2, shape, result);
done:
    Py_DECREF(dims);
    Py_XDECREF(shape);
    Py_XDECREF(operands[0]);
    Py_XDECREF(operands[1]);
    return recorded;
}

static PyObject *fast_binary(Elementwise *self, PyObject *a, PyObject *b) {
    PyObject *n1, *s1, *n2, *s2, *result;
    if (strong_array(a, &n1, &s1)) {
        if (!strong_array(b, &n2, &s2)) return with_scalar(self, n1, s1, b, 0);
        if (s1 != s2) {
            if (SLOT(s1, off_dtype) != SLOT(s2, off_dtype)) return NOT_HANDLED_MARK;
            int equal = PyObject_RichCompareBool(SLOT(s1, off_dims), SLOT(s2, off_dims), Py_EQ);
            if (equal < 0) return NULL;
            if (!equal) return broadcast_binary(self, n1, s1, n2, s2);
        }
        if ((result = result_of(self->same, s1)) == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
        PyObject *operands[] = {n1, n2};
        return record(self, operands, 2, s1, result);
    }
    return strong_array(b, &n2, &s2) ? with_scalar(self, n2, s2, a, 1) : NOT_HANDLED_MARK;
}

/* ``x += y`` (and the other in-place operators): ``x + y`` recorded by ``fast_binary`` and
   ``x`` rebound to it, as ``array._inplace`` does, where ``x`` is a plain array (no view
   record: a view's or a viewed array's write goes through its family), no trace is on
   (whose writes are checked) and the result keeps ``x``'s shape and dtype; else
   NOT_HANDLED_MARK, for the Python method, the definition, which says why not (the op
   recorded here is dropped). A loop's ``total += x`` took ~1 us of Python. */
static PyObject *fast_inplace(Elementwise *self, PyObject *a, PyObject *b) {
    Handle *target = (Handle *)a;
    PyObject *node, *shape;
    if (!array_node(a, &node, &shape) || target->base != Py_None) return NOT_HANDLED_MARK;
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : NOT_HANDLED_MARK;
    Py_INCREF(node); /* held while the record runs Python code (a cut) */
    PyObject *out = fast_binary(self, a, b), *made = NULL;
    if (out == NULL || out == NOT_HANDLED_MARK) {
        Py_DECREF(node);
        return out;
    }
    PyObject *made_shape = NULL;
    if (Py_TYPE(out) == array_type && (made = ((Handle *)out)->node) != NULL && Py_IS_TYPE(made, node_type))
        made_shape = SLOT(made, off_shape);
    int same = target->node == node && made_shape != NULL && Py_IS_TYPE(made_shape, shape_type) &&
               SLOT(made_shape, off_dtype) == SLOT(shape, off_dtype);
    if (same && made_shape != shape)
        same = PyObject_RichCompareBool(SLOT(made_shape, off_dims), SLOT(shape, off_dims), Py_EQ);
    Py_DECREF(node);
    if (same <= 0) {
        Py_DECREF(out);
        return same < 0 ? NULL : NOT_HANDLED_MARK;
    }
    if (add_to_arrays(made, 1)) {
        Py_DECREF(out);
        return NULL;
    }
    release(target);
    target->node = Py_NewRef(made);
    Py_DECREF(out);
    return Py_NewRef(a);
}

static PyObject *fast_unary(Elementwise *self, PyObject *x) {
    PyObject *n, *s, *result;
    if (!strong_array(x, &n, &s)) return NOT_HANDLED_MARK; /* a traced scalar's operator stays weak (Python's) */
    if ((result = result_of(self->same, s)) == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    return record(self, &n, 1, s, result);
}

static PyObject *elementwise_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Elementwise *self = (Elementwise *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames == NULL && nargs == self->arity && array_type != NULL && node_type != NULL) {
        PyObject *out = self->arity == 1 ? fast_unary(self, args[0])
                        : self->reflected == IN_PLACE ? fast_inplace(self, args[0], args[1])
                        : self->reflected ? fast_binary(self, args[1], args[0]) : fast_binary(self, args[0], args[1]);
        if (out != NOT_HANDLED_MARK) return out;
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *elementwise_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *op, *where, *attrs, *same, *with_int, *with_float, *fallback;
    int arity, reflected;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Elementwise takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "UUO!iO!O!O!Oi:Elementwise", &op, &where, &PyDict_Type, &attrs, &arity, &PyDict_Type,
                          &same, &PyDict_Type, &with_int, &PyDict_Type, &with_float, &fallback, &reflected))
        return NULL;
    if (arity != 1 && arity != 2) {
        PyErr_SetString(PyExc_ValueError, "Elementwise: arity must be 1 or 2");
        return NULL;
    }
    if (reflected < 0 || reflected > IN_PLACE || (reflected == IN_PLACE && arity != 2)) {
        PyErr_SetString(PyExc_ValueError, "Elementwise: the operand order must be 0, 1 (reflected) or 2 (in place, binary)");
        return NULL;
    }
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Elementwise: the fallback must be callable");
        return NULL;
    }
    Elementwise *self = (Elementwise *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = elementwise_vectorcall;
    self->op = Py_NewRef(op);
    self->where = Py_NewRef(where);
    self->attrs = Py_NewRef(attrs);
    self->same = Py_NewRef(same);
    self->with_int = Py_NewRef(with_int);
    self->with_float = Py_NewRef(with_float);
    self->fallback = Py_NewRef(fallback);
    self->arity = arity;
    self->reflected = reflected;
    return (PyObject *)self;
}

static int elementwise_traverse(Elementwise *self, visitproc visit, void *arg) {
    Py_VISIT(self->op);
    Py_VISIT(self->where);
    Py_VISIT(self->attrs);
    Py_VISIT(self->same);
    Py_VISIT(self->with_int);
    Py_VISIT(self->with_float);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int elementwise_clear(Elementwise *self) {
    Py_CLEAR(self->op);
    Py_CLEAR(self->where);
    Py_CLEAR(self->attrs);
    Py_CLEAR(self->same);
    Py_CLEAR(self->with_int);
    Py_CLEAR(self->with_float);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void elementwise_dealloc(Elementwise *self) {
    PyObject_GC_UnTrack(self);
    elementwise_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* As a class attribute (an operator of Array) it binds as a function does. */
static PyObject *elementwise_get(PyObject *self, PyObject *obj, PyObject *type) {
    (void)type;
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* Pickled by reference, as a function is: its module's attribute of its qualified name. */
static PyObject *elementwise_reduce(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyObject *elementwise_repr(Elementwise *self) {
    return PyUnicode_FromFormat("<plaidarray elementwise function %U>", self->where);
}

static PyMemberDef elementwise_members[] = {
    {"fallback", T_OBJECT_EX, offsetof(Elementwise, fallback), READONLY, "The Python definition, for other calls."},
    {"op", T_OBJECT_EX, offsetof(Elementwise, op), READONLY, "The HLO op it records."},
    {"__dictoffset__", T_PYSSIZET, offsetof(Elementwise, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Elementwise, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef elementwise_methods[] = {
    {"__reduce__", elementwise_reduce, METH_NOARGS, "Pickled by its qualified name."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject elementwise_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.Elementwise",
    .tp_doc = "Elementwise(op, where, attrs, arity, same, with_int, with_float, fallback, reflected): an "
              "elementwise function's common cases in C, the rest the fallback's; reflected 1 swaps the "
              "operands (__radd__), 2 rebinds the first to the result (__iadd__).",
    .tp_basicsize = sizeof(Elementwise),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = elementwise_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Elementwise, vectorcall),
    .tp_dictoffset = offsetof(Elementwise, dict),
    .tp_descr_get = elementwise_get,
    .tp_repr = (reprfunc)elementwise_repr,
    .tp_dealloc = (destructor)elementwise_dealloc,
    .tp_traverse = (traverseproc)elementwise_traverse,
    .tp_clear = (inquiry)elementwise_clear,
    .tp_members = elementwise_members,
    .tp_methods = elementwise_methods,
};

/* --- reductions' common cases ---------------------------------------------------------- */

/* A reduction of a floating-point array over all its axes or some (``sum(w)``,
   ``max(x, axis=0)``, ``mean(w)``), recorded as api.statistical.along records it (and,
   for a mean, the division by its count as _whole_mean records it), from C: a loop's
   windows and batches of new lengths miss every recipe, and there the Python path was
   2-9 us a reduction. Anything else is the fallback's (the recorded Python function). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *kind, *where;  /* the reduce's kind; the function's name, for messages and a mean's count */
    PyObject *attrs_table;   /* (axes, kind) -> the reduce's attributes, shared with the Python path */
    PyObject *scalar_shapes; /* dtype -> its 0-d Shape, for the dtypes taken (floating-point) */
    PyObject *converts;      /* dtype -> (attrs, dtype, its 0-d Shape): converted first, as the rules convert it */
    PyObject *no_attrs;      /* a mean's division's attributes (none) */
    PyObject *make_count;    /* (count, dtype) -> a 0-d buffer of a mean's count, as the Python path makes it */
    PyObject *fallback;
    PyObject *dict;
    int empty, mean, max_rank;
    int variance; /* 1: var, 2: std, as _whole_var and _whole_std record them; 0: a reduction */
} Reduction;

/* What one reduction records: the reduce's kind, whether an empty operand is taken, whether
   it is a mean (the total divided by its count) and the name scalar_operand is given. */
typedef struct {
    PyObject *kind;
    int empty, mean;
    PyObject *where;
} Reducing;

static PyObject *str_convert;
static PyObject *str_axis, *str_keepdims, *str_reduce, *str_reshape, *str_divide, *str_dimensions, *str_kind,
    *str_correction, *str_add, *str_mean, *str_subtract, *str_multiply, *str_sqrt;

/* The Shapes of reductions' kept dims, by (dims, dtype): the same Shape object for a shape
   met again, so that a mean's count broadcast to it is found in scalar_cache (a table
   keyed by the Shape object) without making its dictionary key. Emptied past KEPT_SHAPES. */
#define KEPT_SHAPES 256
static PyObject *kept_shapes;

static PyObject *kept_shape_of(PyObject *dims, PyObject *dtype) {
    if (kept_shapes == NULL && (kept_shapes = PyDict_New()) == NULL) return NULL;
    PyObject *key = PyTuple_Pack(2, dims, dtype);
    if (key == NULL) return NULL;
    PyObject *shape = PyDict_GetItemWithError(kept_shapes, key);
    if (shape != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        return shape == NULL ? NULL : Py_NewRef(shape);
    }
    if (PyDict_GET_SIZE(kept_shapes) >= KEPT_SHAPES) PyDict_Clear(kept_shapes);
    shape = PyObject_CallFunctionObjArgs((PyObject *)shape_type, dims, dtype, NULL);
    if (shape != NULL && PyDict_SetItem(kept_shapes, key, shape)) Py_CLEAR(shape);
    Py_DECREF(key);
    return shape;
}

/* The Array of ``node`` recorded over ``operands`` (borrowed) as ``op`` with ``attrs`` and ``shape``. */
static PyObject *record_op(PyObject *op, PyObject *operands, PyObject *attrs, PyObject *shape) {
    PyObject *args[] = {op, operands, attrs, shape};
    PyObject *node = derive(NULL, args, 4);
    return node == NULL ? NULL : wrapped(node);
}

/* The axes ``axis`` names of an array of ``rank`` axes, as _axes gives them (sorted, each
   in range once), in ``axes`` with their count; 0 where the rules decide (another type, out
   of range, repeated, none), -1 on error. */
static int reduced_axes(PyObject *axis, Py_ssize_t rank, int *axes, Py_ssize_t *count) {
    if (axis == NULL || axis == Py_None) {
        for (Py_ssize_t i = 0; i < rank; i++) axes[i] = 1;
        *count = rank;
        return 1;
    }
    PyObject *single[1] = {axis};
    PyObject *const *items = single;
    Py_ssize_t n = 1;
    if (PyTuple_CheckExact(axis)) {
        items = &PyTuple_GET_ITEM(axis, 0);
        n = PyTuple_GET_SIZE(axis);
    }
    if (n == 0) return 0;
    for (Py_ssize_t i = 0; i < rank; i++) axes[i] = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i])) return 0;
        int overflow = 0;
        long long a = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        if (a == -1 && PyErr_Occurred()) return -1;
        if (overflow || a < -rank || a >= rank) return 0;
        if (a < 0) a += rank;
        if (axes[a]) return 0;
        axes[a] = 1;
    }
    *count = n;
    return 1;
}

/* The reduce's attributes for ``axes`` (a tuple), from the shared table or made into it. */
static PyObject *reduce_attrs(Reduction *self, PyObject *axes, PyObject *kind) {
    PyObject *key = PyTuple_Pack(2, axes, kind);
    if (key == NULL) return NULL;
    PyObject *attrs = PyDict_GetItemWithError(self->attrs_table, key);
    if (attrs != NULL) {
        Py_DECREF(key);
        return Py_NewRef(attrs);
    }
    if (PyErr_Occurred() || (attrs = PyDict_New()) == NULL) {
        Py_DECREF(key);
        return NULL;
    }
    if (PyDict_SetItem(attrs, str_dimensions, axes) || PyDict_SetItem(attrs, str_kind, kind) ||
        PyDict_SetItem(self->attrs_table, key, attrs))
        Py_CLEAR(attrs);
    Py_DECREF(key);
    return attrs;
}

static PyObject *reduction_in_c(Reduction *self, const Reducing *how, PyObject *x, PyObject *axis, PyObject *keepdims) {
    PyObject *node, *shape;
    if (!strong_array(x, &node, &shape)) return NOT_HANDLED_MARK;
    PyObject *dtype = SLOT(shape, off_dtype), *dims = SLOT(shape, off_dims);
    /* (attrs, dtype, 0-d Shape): converted first, a count of booleans into the default integer */
    PyObject *conversion = PyDict_GetItemWithError(self->converts, dtype), *scalar_shape;
    if (conversion == NULL && PyErr_Occurred()) return NULL;
    if (conversion != NULL) {
        if (!PyTuple_CheckExact(conversion) || PyTuple_GET_SIZE(conversion) != 3) {
            PyErr_SetString(PyExc_TypeError, "Reduction: a conversion is (attrs, dtype, 0-d shape)");
            return NULL;
        }
        dtype = PyTuple_GET_ITEM(conversion, 1);
        scalar_shape = PyTuple_GET_ITEM(conversion, 2);
    } else {
        scalar_shape = PyDict_GetItemWithError(self->scalar_shapes, dtype);
        if (scalar_shape == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    }
    if (!PyTuple_CheckExact(dims)) return NOT_HANDLED_MARK;
    Py_ssize_t rank = PyTuple_GET_SIZE(dims), count = 0;
    if (rank == 0 || rank > self->max_rank) return NOT_HANDLED_MARK;
    long long sizes[8], elements = 1;
    for (Py_ssize_t i = 0; i < rank; i++) {
        sizes[i] = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, i));
        if (sizes[i] == -1 && PyErr_Occurred()) return NULL;
        if (sizes[i] == 0 && !how->empty) return NOT_HANDLED_MARK;
        elements *= sizes[i];
    }
    int axes[8];
    int found = reduced_axes(axis, rank, axes, &count);
    if (found <= 0) return found < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *axes_tuple = PyTuple_New(count), *reduced = PyTuple_New(rank - count);
    PyObject *kept = keepdims == Py_True ? PyTuple_New(rank) : NULL; /* the reshape's dims, where one is made */
    PyObject *attrs = NULL, *out_shape = NULL, *operands = NULL, *out = NULL;
    if (axes_tuple == NULL || reduced == NULL || (keepdims == Py_True && kept == NULL)) goto done;
    long long remaining = 1;
    for (Py_ssize_t i = 0, a = 0, r = 0; i < rank; i++) {
        PyObject *d = PyTuple_GET_ITEM(dims, i);
        if (axes[i]) {
            PyObject *number = PyLong_FromSsize_t(i);
            if (number == NULL) goto done;
            PyTuple_SET_ITEM(axes_tuple, a++, number);
            if (kept != NULL) {
                PyObject *one = PyLong_FromLong(1);
                if (one == NULL) goto done;
                PyTuple_SET_ITEM(kept, i, one);
            }
        } else {
            PyTuple_SET_ITEM(reduced, r++, Py_NewRef(d));
            if (kept != NULL) PyTuple_SET_ITEM(kept, i, Py_NewRef(d));
            remaining *= sizes[i];
        }
    }
    if ((attrs = reduce_attrs(self, axes_tuple, how->kind)) == NULL) goto done;
    out_shape = count < rank ? PyObject_CallFunctionObjArgs((PyObject *)shape_type, reduced, dtype, NULL)
                             : Py_NewRef(scalar_shape);
    if (out_shape == NULL) goto done;
    if (conversion != NULL) { /* the operand converted, as graph.convert records it */
        PyObject *converted_shape = PyObject_CallFunctionObjArgs((PyObject *)shape_type, dims, dtype, NULL);
        PyObject *on = converted_shape == NULL ? NULL : PyTuple_Pack(1, node);
        if (on != NULL) {
            PyObject *args[] = {str_convert, on, PyTuple_GET_ITEM(conversion, 0), converted_shape};
            operands = derive(NULL, args, 4);
        }
        Py_XDECREF(converted_shape);
        Py_XDECREF(on);
        if (operands == NULL) goto done;
        Py_SETREF(operands, PyTuple_Pack(1, operands));
    } else {
        operands = PyTuple_Pack(1, node);
    }
    if (operands == NULL) goto done;
    if ((out = record_op(str_reduce, operands, attrs, out_shape)) == NULL) goto done;
    if (keepdims == Py_True) { /* the reduced axes kept as units: a reshape, as along records it */
        PyObject *reshape_attrs = PyDict_New(), *kept_shape = NULL, *on = NULL, *reshaped = NULL;
        if (reshape_attrs != NULL && PyDict_SetItem(reshape_attrs, str_dims, kept) == 0 &&
            (kept_shape = kept_shape_of(kept, dtype)) != NULL &&
            (on = PyTuple_Pack(1, ((Handle *)out)->node)) != NULL)
            reshaped = record_op(str_reshape, on, reshape_attrs, kept_shape);
        Py_XDECREF(reshape_attrs);
        Py_XDECREF(on);
        Py_XSETREF(out, reshaped);
        Py_XSETREF(out_shape, kept_shape);
        if (out == NULL) goto done;
    }
    long long divisor = remaining ? elements / remaining : 0;
    if (how->mean && divisor != 1) { /* a mean: the total divided by its run-time count, as _whole_mean records it */
        PyObject *value = PyFloat_FromDouble((double)divisor), *scalar = NULL, *pair = NULL, *mean = NULL;
        PyObject *total = ((Handle *)out)->node, *buffer = NULL;
        if (value != NULL && PyTuple_GET_SIZE(SLOT(out_shape, off_dims)) == 0) {
            /* a 0-d total: a ready node of its own (graph.scalar_operand reuses no 0-d node) */
            PyObject *call[] = {value, dtype};
            buffer = PyObject_Vectorcall(self->make_count, call, 2, NULL);
            scalar = buffer == NULL ? NULL : ready_node(buffer, out_shape, Py_None);
        } else if (value != NULL) {
            scalar = scalar_node(how->where, value, out_shape);
        }
        if (scalar != NULL && (pair = PyTuple_Pack(2, total, scalar)) != NULL)
            mean = record_op(str_divide, pair, self->no_attrs, out_shape);
        Py_XDECREF(buffer);
        Py_XDECREF(value);
        Py_XDECREF(scalar);
        Py_XDECREF(pair);
        Py_XSETREF(out, mean);
    }
done:
    Py_XDECREF(axes_tuple);
    Py_XDECREF(reduced);
    Py_XDECREF(kept);
    Py_XDECREF(attrs);
    Py_XDECREF(out_shape);
    Py_XDECREF(operands);
    return out;
}

/* The Array of ``op`` over ``a`` (and ``b`` where not NULL), both nodes, of ``shape``, with no attributes. */
static PyObject *record_plain(Reduction *self, PyObject *op, PyObject *a, PyObject *b, PyObject *shape) {
    PyObject *operands = b == NULL ? PyTuple_Pack(1, a) : PyTuple_Pack(2, a, b);
    if (operands == NULL) return NULL;
    PyObject *out = record_op(op, operands, self->no_attrs, shape);
    Py_DECREF(operands);
    return out;
}

/* ``var(x, correction=...)`` (``std`` where ``self->variance`` is 2) of a floating-point
   array over all its axes, as _whole_var (_whole_std) records it: the 0-d mean, the
   deviations from it squared and summed, divided by the run-time
   ``N - correction``; NOT_HANDLED_MARK where that records nothing (one element, ``N -
   correction`` not positive, a correction past what a count can be). */
static PyObject *variance_in_c(Reduction *self, PyObject *x, PyObject *correction) {
    PyObject *node, *shape;
    if (!strong_array(x, &node, &shape)) return NOT_HANDLED_MARK;
    PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype);
    PyObject *scalar_shape = PyDict_GetItemWithError(self->scalar_shapes, dtype);
    if (scalar_shape == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    if (!PyTuple_CheckExact(dims)) return NOT_HANDLED_MARK;
    long long n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++) {
        long long d = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, i));
        if (d == -1 && PyErr_Occurred()) return NULL;
        n *= d;
    }
    double divisor; /* float(n - correction), as Python computes it */
    if (correction == NULL) {
        divisor = (double)n;
    } else if (PyLong_CheckExact(correction)) {
        int overflow = 0;
        long long c = PyLong_AsLongLongAndOverflow(correction, &overflow);
        if (c == -1 && PyErr_Occurred()) return NULL;
        if (overflow || c < -(1LL << 52) || c > (1LL << 52)) return NOT_HANDLED_MARK;
        divisor = (double)(n - c);
    } else if (PyFloat_CheckExact(correction)) {
        divisor = (double)n - PyFloat_AS_DOUBLE(correction);
    } else {
        return NOT_HANDLED_MARK;
    }
    if (n == 1 || !(divisor > 0) || divisor > 4.0e18) return NOT_HANDLED_MARK;
    static const Reducing centre_how = {NULL, 0, 1, NULL}, total_how = {NULL, 0, 0, NULL};
    Reducing centring = centre_how, totalling = total_how;
    centring.kind = totalling.kind = str_add;
    centring.where = totalling.where = str_mean;
    PyObject *centre = reduction_in_c(self, &centring, x, NULL, Py_False);
    if (centre == NULL || centre == NOT_HANDLED_MARK) return centre;
    PyObject *attrs = PyDict_New(), *axes = PyTuple_New(0), *spread = NULL; /* the 0-d mean spread along every axis */
    PyObject *deviation = NULL, *squared = NULL, *total = NULL, *value = NULL, *buffer = NULL, *count = NULL;
    PyObject *out = NULL;
    if (attrs == NULL || axes == NULL) goto done;
    if (PyDict_SetItem(attrs, str_dims, dims) || PyDict_SetItem(attrs, str_broadcast_dimensions, axes)) goto done;
    PyObject *spread_args[4] = {str_broadcast_in_dim, NULL, attrs, shape};
    if ((spread_args[1] = PyTuple_Pack(1, ((Handle *)centre)->node)) == NULL) goto done;
    spread = derive(NULL, spread_args, 4); /* graph.broadcast_node's: no Array of its own */
    Py_DECREF(spread_args[1]);
    if (spread == NULL) goto done;
    if ((deviation = record_plain(self, str_subtract, node, spread, shape)) == NULL) goto done;
    PyObject *d = ((Handle *)deviation)->node;
    if ((squared = record_plain(self, str_multiply, d, d, shape)) == NULL) goto done;
    total = reduction_in_c(self, &totalling, squared, NULL, Py_False);
    if (total == NOT_HANDLED_MARK) {
        PyErr_SetString(PyExc_RuntimeError, "var: the squared deviations' sum was not recorded");
        total = NULL;
    }
    if (total == NULL || (value = PyFloat_FromDouble(divisor)) == NULL) goto done;
    PyObject *call[] = {value, dtype};
    if ((buffer = PyObject_Vectorcall(self->make_count, call, 2, NULL)) == NULL) goto done;
    if ((count = ready_node(buffer, scalar_shape, Py_None)) == NULL) goto done;
    out = record_plain(self, str_divide, ((Handle *)total)->node, count, scalar_shape);
    if (out != NULL && self->variance == 2)
        Py_SETREF(out, record_plain(self, str_sqrt, ((Handle *)out)->node, NULL, scalar_shape));
done:
    Py_DECREF(centre);
    Py_XDECREF(attrs);
    Py_XDECREF(axes);
    Py_XDECREF(spread);
    Py_XDECREF(deviation);
    Py_XDECREF(squared);
    Py_XDECREF(total);
    Py_XDECREF(value);
    Py_XDECREF(buffer);
    Py_XDECREF(count);
    return out;
}

static PyObject *reduction_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Reduction *self = (Reduction *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs == 1 && array_type != NULL && node_type != NULL && wrap_fn != NULL) {
        PyObject *axis = NULL, *keepdims = Py_False, *correction = NULL;
        int ours = 1;
        Py_ssize_t n_kw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
        for (Py_ssize_t i = 0; i < n_kw && ours; i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
            if (self->variance) {
                if (PyUnicode_Compare(name, str_correction) == 0) correction = value;
                else ours = 0;
            } else if (PyUnicode_Compare(name, str_axis) == 0) {
                axis = value;
            } else if (PyUnicode_Compare(name, str_keepdims) == 0 && (value == Py_True || value == Py_False)) {
                keepdims = value;
            } else {
                ours = 0;
            }
        }
        if (PyErr_Occurred()) return NULL;
        int tracing = ours ? tracing_now() : 1;
        if (tracing < 0) return NULL;
        if (!tracing) {
            Reducing how = {self->kind, self->empty, self->mean, self->where};
            PyObject *out = self->variance ? variance_in_c(self, args[0], correction)
                                           : reduction_in_c(self, &how, args[0], axis, keepdims);
            if (out != NOT_HANDLED_MARK) return out;
        }
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *reduction_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *kind, *where, *attrs_table, *scalar_shapes, *converts, *no_attrs, *make_count, *fallback;
    int empty, mean, max_rank, variance;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Reduction takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "UUO!O!O!O!OppiiO:Reduction", &kind, &where, &PyDict_Type, &attrs_table,
                          &PyDict_Type, &scalar_shapes, &PyDict_Type, &converts, &PyDict_Type, &no_attrs, &make_count,
                          &empty, &mean, &max_rank, &variance, &fallback))
        return NULL;
    if (max_rank < 1 || max_rank > 8 || variance < 0 || variance > 2) {
        PyErr_SetString(PyExc_ValueError, "Reduction: the largest rank taken must be 1 to 8, variance 0, 1 or 2");
        return NULL;
    }
    if (!PyCallable_Check(fallback) || !PyCallable_Check(make_count)) {
        PyErr_SetString(PyExc_TypeError, "Reduction: the fallback and make_count must be callable");
        return NULL;
    }
    Reduction *self = (Reduction *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = reduction_vectorcall;
    self->kind = Py_NewRef(kind);
    self->where = Py_NewRef(where);
    self->attrs_table = Py_NewRef(attrs_table);
    self->scalar_shapes = Py_NewRef(scalar_shapes);
    self->converts = Py_NewRef(converts);
    self->no_attrs = Py_NewRef(no_attrs);
    self->make_count = Py_NewRef(make_count);
    self->fallback = Py_NewRef(fallback);
    self->empty = empty;
    self->mean = mean;
    self->max_rank = max_rank;
    self->variance = variance;
    return (PyObject *)self;
}

static int reduction_traverse(Reduction *self, visitproc visit, void *arg) {
    Py_VISIT(self->kind);
    Py_VISIT(self->where);
    Py_VISIT(self->attrs_table);
    Py_VISIT(self->scalar_shapes);
    Py_VISIT(self->converts);
    Py_VISIT(self->no_attrs);
    Py_VISIT(self->make_count);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int reduction_clear(Reduction *self) {
    Py_CLEAR(self->kind);
    Py_CLEAR(self->where);
    Py_CLEAR(self->attrs_table);
    Py_CLEAR(self->scalar_shapes);
    Py_CLEAR(self->converts);
    Py_CLEAR(self->no_attrs);
    Py_CLEAR(self->make_count);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void reduction_dealloc(Reduction *self) {
    PyObject_GC_UnTrack(self);
    reduction_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *reduction_repr(Reduction *self) {
    return PyUnicode_FromFormat("<plaidarray reduction %U>", self->where);
}

static PyMemberDef reduction_members[] = {
    {"fallback", T_OBJECT_EX, offsetof(Reduction, fallback), READONLY, "The Python definition, for other calls."},
    {"kind", T_OBJECT_EX, offsetof(Reduction, kind), READONLY, "The reduce's kind."},
    {"__dictoffset__", T_PYSSIZET, offsetof(Reduction, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Reduction, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef reduction_methods[] = {
    {"__reduce__", elementwise_reduce, METH_NOARGS, "Pickled by its qualified name."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject reduction_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.Reduction",
    .tp_doc = "Reduction(kind, where, attrs_table, scalar_shapes, converts, no_attrs, make_count, empty, mean, "
              "max_rank, variance, fallback): a "
              "reduction's common cases in C, the rest the fallback's.",
    .tp_basicsize = sizeof(Reduction),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = reduction_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Reduction, vectorcall),
    .tp_dictoffset = offsetof(Reduction, dict),
    .tp_descr_get = elementwise_get,
    .tp_repr = (reprfunc)reduction_repr,
    .tp_dealloc = (destructor)reduction_dealloc,
    .tp_traverse = (traverseproc)reduction_traverse,
    .tp_clear = (inquiry)reduction_clear,
    .tp_members = reduction_members,
    .tp_methods = reduction_methods,
};

/* --- matrix products' common cases ---------------------------------------------------- */

/* ``matmul(a, b)`` of two arrays of one numeric dtype that is one product without batch
   axes (a matrix or vector times a matrix or vector, a stack of rows times a matrix), as
   api.linear_algebra.matmul records it: one dot_general contracting a's last axis with b's
   first, its result a's other axes then b's, the shape the dot_general rule gives there. A
   loop of small products at new sizes missed every recipe (13.5 us a product). The rest,
   and every call while tracing, is the fallback's. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *accepted; /* the dtypes taken (numeric), as keys */
    PyObject *attrs;    /* a's rank -> the dot_general's attributes (read only, shared) */
    PyObject *fallback;
    PyObject *dict;
} Product;

static PyObject *str_dot_general, *str_transpose;

/* Whether `node` is a transpose's: a product of one (`a.T @ r`) reads the matrix under it
   in place (``folded_product``). */
static int is_transpose(PyObject *node) {
    PyObject *op = SLOT(node, off_op);
    return op == str_transpose || (op != NULL && PyUnicode_CheckExact(op) && PyUnicode_Compare(op, str_transpose) == 0);
}

static PyObject *str_first_transposed, *str_second_transposed;

/* The dims of a node's shape as sizes, 0 where it is no tuple of 1 or 2 sizes of at least 2
   each (the products ``folded_product`` takes). */
static Py_ssize_t folded_dims(PyObject *dims, long long *sizes) {
    if (!PyTuple_CheckExact(dims) || PyTuple_GET_SIZE(dims) < 1 || PyTuple_GET_SIZE(dims) > 2) return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++) {
        PyObject *size = PyTuple_GET_ITEM(dims, i);
        int overflow = 0;
        if (!PyLong_CheckExact(size)) return 0;
        sizes[i] = PyLong_AsLongLongAndOverflow(size, &overflow);
        if (overflow || sizes[i] < 2) return 0;
    }
    return PyTuple_GET_SIZE(dims);
}

/* The dot_general of the nodes ``lhs`` and ``rhs`` with ``attrs``, of shape ``dims`` (a
   reference given up) and ``dtype``, recorded and wrapped. */
static PyObject *recorded_product(PyObject *lhs, PyObject *rhs, PyObject *attrs, PyObject *dims, PyObject *dtype) {
    PyObject *shape = PyObject_CallFunctionObjArgs((PyObject *)shape_type, dims, dtype, NULL), *out = NULL;
    Py_DECREF(dims);
    if (shape == NULL) return NULL;
    PyObject *operands = PyTuple_Pack(2, lhs, rhs);
    if (operands != NULL) out = record_op(str_dot_general, operands, attrs, shape);
    Py_XDECREF(operands);
    Py_DECREF(shape);
    return out;
}

/* ``a @ b`` where exactly one operand is a matrix recorded as a transpose (``X.T @ v``,
   ``v @ Y.T``, ``X.T @ Y``, ``A @ B.T``), as api.linear_algebra._transpose_folded records
   it: one dot_general of the matrix under the transpose, contracted along its other axis
   (``v @ X``, ``Y @ v``, ``tensordot(X, Y, ([0], [0]))``, ``tensordot(A, B, ([1], [1]))``),
   which BLAS reads in place. Sizes of at least 2, one dtype, matrices and vectors only; the
   rest (and both operands transposes) the fallback's. ``a`` and ``b`` are strong arrays. */
static PyObject *folded_product(Product *self, PyObject *na, PyObject *sa, PyObject *nb, PyObject *sb, int first) {
    PyObject *dtype = SLOT(sa, off_dtype);
    if (dtype != SLOT(sb, off_dtype)) return NOT_HANDLED_MARK;
    PyObject *transposed = first ? na : nb, *operands = SLOT(transposed, off_operands);
    if (!PyTuple_CheckExact(operands) || PyTuple_GET_SIZE(operands) != 1) return NOT_HANDLED_MARK;
    PyObject *under = PyTuple_GET_ITEM(operands, 0), *other = first ? nb : na;
    PyObject *so = first ? sb : sa, *su = Py_IS_TYPE(under, node_type) ? SLOT(under, off_shape) : NULL;
    if (su == NULL || !Py_IS_TYPE(su, shape_type) || SLOT(su, off_dtype) != dtype) return NOT_HANDLED_MARK;
    long long u[2], o[2], t[2];
    Py_ssize_t ru = folded_dims(SLOT(su, off_dims), u), ro = folded_dims(SLOT(so, off_dims), o);
    Py_ssize_t rt = folded_dims(SLOT(first ? sa : sb, off_dims), t);
    if (ru != 2 || rt != 2 || ro == 0) return NOT_HANDLED_MARK;
    int taken = PyDict_Contains(self->accepted, dtype);
    if (taken <= 0) return taken < 0 ? NULL : NOT_HANDLED_MARK;
    /* the contracted size: the transpose's last axis (the matrix's first) for a.T @ b, its
       first (the matrix's last) for a @ b.T; the other operand's first, or its last */
    long long contracted = first ? u[0] : u[1], others = first ? o[0] : o[ro - 1];
    if (contracted != others) return NOT_HANDLED_MARK; /* the rules' error */
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *lhs, *rhs, *key, *dims;
    if (ro == 1) { /* a vector: v @ X for X.T @ v, Y @ v for v @ Y.T, as matmul records them */
        lhs = first ? other : under;
        rhs = first ? under : other;
        key = PyLong_FromLong(first ? 1 : 2);
        dims = Py_BuildValue("(L)", first ? u[1] : u[0]);
    } else { /* matrices: the tensordot of both along the matrix's other axis */
        lhs = first ? under : other;
        rhs = first ? other : under;
        key = Py_NewRef(first ? str_first_transposed : str_second_transposed);
        dims = first ? Py_BuildValue("(LL)", u[1], o[1]) : Py_BuildValue("(LL)", o[0], u[0]);
    }
    PyObject *attrs = key == NULL ? NULL : PyDict_GetItemWithError(self->attrs, key);
    Py_XDECREF(key);
    if (attrs == NULL || dims == NULL) {
        Py_XDECREF(dims);
        return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    }
    return recorded_product(lhs, rhs, attrs, dims, dtype);
}

static PyObject *product_in_c(Product *self, PyObject *a, PyObject *b) {
    PyObject *na, *sa, *nb, *sb;
    if (!strong_array(a, &na, &sa) || !strong_array(b, &nb, &sb)) return NOT_HANDLED_MARK;
    int first = is_transpose(na), second = is_transpose(nb);
    if (first != second) return folded_product(self, na, sa, nb, sb, first);
    if (first) return NOT_HANDLED_MARK;
    PyObject *dtype = SLOT(sa, off_dtype), *da = SLOT(sa, off_dims), *db = SLOT(sb, off_dims);
    if (dtype != SLOT(sb, off_dtype) || !PyTuple_CheckExact(da) || !PyTuple_CheckExact(db)) return NOT_HANDLED_MARK;
    int taken = PyDict_Contains(self->accepted, dtype);
    if (taken <= 0) return taken < 0 ? NULL : NOT_HANDLED_MARK;
    Py_ssize_t ra = PyTuple_GET_SIZE(da), rb = PyTuple_GET_SIZE(db);
    if (ra == 0 || rb == 0 || !(rb == 1 || (rb == 2 && ra > 1) || (ra == 1 && rb == 2))) return NOT_HANDLED_MARK;
    PyObject *rank = PyLong_FromSsize_t(ra);
    if (rank == NULL) return NULL;
    PyObject *attrs = PyDict_GetItemWithError(self->attrs, rank);
    Py_DECREF(rank);
    if (attrs == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    long long k = PyLong_AsLongLong(PyTuple_GET_ITEM(da, ra - 1)), kb = PyLong_AsLongLong(PyTuple_GET_ITEM(db, 0));
    if (PyErr_Occurred()) return NULL;
    if (k != kb || k == 0) return NOT_HANDLED_MARK; /* sizes that differ: the rules' error; an empty sum: zeros */
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *dims = PyTuple_New(ra - 1 + rb - 1);
    if (dims == NULL) return NULL;
    for (Py_ssize_t i = 0; i < ra - 1; i++) PyTuple_SET_ITEM(dims, i, Py_NewRef(PyTuple_GET_ITEM(da, i)));
    for (Py_ssize_t i = 1; i < rb; i++) PyTuple_SET_ITEM(dims, ra - 2 + i, Py_NewRef(PyTuple_GET_ITEM(db, i)));
    return recorded_product(na, nb, attrs, dims, dtype);
}

static PyObject *product_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Product *self = (Product *)callable;
    if (kwnames == NULL && PyVectorcall_NARGS(nargsf) == 2 && array_type != NULL && node_type != NULL &&
        wrap_fn != NULL) {
        PyObject *out = product_in_c(self, args[0], args[1]);
        if (out != NOT_HANDLED_MARK) return out;
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *product_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *accepted, *attrs, *fallback;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Product takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O:Product", &PyDict_Type, &accepted, &PyDict_Type, &attrs, &fallback))
        return NULL;
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Product: the fallback must be callable");
        return NULL;
    }
    Product *self = (Product *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = product_vectorcall;
    self->accepted = Py_NewRef(accepted);
    self->attrs = Py_NewRef(attrs);
    self->fallback = Py_NewRef(fallback);
    return (PyObject *)self;
}

static int product_traverse(Product *self, visitproc visit, void *arg) {
    Py_VISIT(self->accepted);
    Py_VISIT(self->attrs);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int product_clear(Product *self) {
    Py_CLEAR(self->accepted);
    Py_CLEAR(self->attrs);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void product_dealloc(Product *self) {
    PyObject_GC_UnTrack(self);
    product_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef product_members[] = {
    {"fallback", T_OBJECT_EX, offsetof(Product, fallback), READONLY, "The Python definition, for other calls."},
    {"__dictoffset__", T_PYSSIZET, offsetof(Product, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Product, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef product_methods[] = {
    {"__reduce__", elementwise_reduce, METH_NOARGS, "Pickled by its qualified name."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject product_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.Product",
    .tp_doc = "Product(accepted, attrs, fallback): matmul's common cases in C, the rest the fallback's.",
    .tp_basicsize = sizeof(Product),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = product_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Product, vectorcall),
    .tp_dictoffset = offsetof(Product, dict),
    .tp_descr_get = elementwise_get,
    .tp_dealloc = (destructor)product_dealloc,
    .tp_traverse = (traverseproc)product_traverse,
    .tp_clear = (inquiry)product_clear,
    .tp_members = product_members,
    .tp_methods = product_methods,
};

/* --- joins that extend the latest ----------------------------------------------------- */

/* ``concat(arrays, axis=k)`` as api.manipulation.concat records it where api/extended.py
   neither finds nor remembers a concatenation (``extended.extend``): 2 to ``most`` arrays
   of one dtype and rank, their sizes agreeing off an int axis, none empty along it, the
   first or the last pending (else the join may be copied at once, ``trace/joins.py``), the
   first the latest concatenation's result or a view of its array (``h = concat([h, row])``,
   a ring buffer's ``concat([buf[1:], x])``), and no remembered concatenation starting with
   it. One ``concatenate`` node, then the latest result (``extended._last``). Python's path
   took ~7-9 us of such a step. Everything else, and every call while tracing, is the
   fallback's. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *attrs;      /* a tuple: the concatenate's attributes along each axis (read only, shared) */
    PyObject *extended;   /* api.extended's globals: its ``_recent`` and ``_last`` */
    Py_ssize_t most;      /* manipulation.JOIN_OPERANDS */
    PyObject *fallback;
    PyObject *dict;
} Join;

static PyObject *str_concatenate, *str_recent, *str_last, *str_root;

/* The most operands ``Join`` takes itself (``most`` is at most this). */
#define JOIN_MOST 16

/* Whether a remembered concatenation (``_Made``: its operands' weak references second)
   starts with ``first``: 1, 0, -1 on error. */
static int remembered_from(PyObject *recent, PyObject *first) {
    PyObject *entries = PyObject_GetIter(recent), *made;
    if (entries == NULL) return -1;
    int found = 0;
    while (!found && (made = PyIter_Next(entries)) != NULL) {
        PyObject *operands = PyTuple_Check(made) && PyTuple_GET_SIZE(made) > 1 ? PyTuple_GET_ITEM(made, 1) : NULL;
        /* anything but a tuple of weak references: asked of the fallback */
        found = operands == NULL || !PyTuple_CheckExact(operands) || PyTuple_GET_SIZE(operands) == 0 ||
                !PyWeakref_CheckRef(PyTuple_GET_ITEM(operands, 0)) ||
                PyWeakref_GetObject(PyTuple_GET_ITEM(operands, 0)) == first; /* borrowed: compared only */
        Py_DECREF(made);
    }
    Py_DECREF(entries);
    return PyErr_Occurred() ? -1 : found;
}

/* Whether ``first`` (an Array of ``node``) extends or slides the latest result
   (``extended._extends_latest``): it is the latest result's array, or a view of it (its
   family's root holds that node). 1, 0, -1 on error; 0 for an unset or dead reference. */
static int extends_latest(PyObject *last_ref, PyObject *first, PyObject *node) {
    if (last_ref == NULL || !PyWeakref_CheckRef(last_ref)) return 0;
    PyObject *last = PyWeakref_GetObject(last_ref); /* borrowed: compared only */
    if (last == Py_None) return 0;
    if (last == node) return 1;
    PyObject *record = ((Handle *)first)->base;
    if (view_of_type == NULL || record == NULL || !Py_IS_TYPE(record, view_of_type)) return 0;
    PyObject *family = PyObject_GetAttr(record, str_family);
    PyObject *root_ref = family == NULL ? NULL : PyObject_GetAttr(family, str_root);
    Py_XDECREF(family);
    if (root_ref == NULL) return -1;
    PyObject *root = PyWeakref_CheckRef(root_ref) ? PyWeakref_GetObject(root_ref) : NULL; /* borrowed */
    int found = root != NULL && Py_TYPE(root) == array_type && ((Handle *)root)->node == last;
    Py_DECREF(root_ref);
    return found;
}

static PyObject *join_in_c(Join *self, PyObject *arrays, PyObject *axis) {
    if (!(PyList_CheckExact(arrays) || PyTuple_CheckExact(arrays)) || !PyLong_CheckExact(axis)) return NOT_HANDLED_MARK;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(arrays);
    if (n < 2 || n > self->most || n > JOIN_MOST) return NOT_HANDLED_MARK;
    PyObject *nodes[JOIN_MOST], *shape, *dtype, *first_dims;
    PyObject **items = PySequence_Fast_ITEMS(arrays);
    if (!strong_array(items[0], &nodes[0], &shape)) return NOT_HANDLED_MARK;
    dtype = SLOT(shape, off_dtype);
    first_dims = SLOT(shape, off_dims);
    if (!PyTuple_CheckExact(first_dims)) return NOT_HANDLED_MARK;
    Py_ssize_t rank = PyTuple_GET_SIZE(first_dims);
    int overflow = 0;
    long long along = PyLong_AsLongLongAndOverflow(axis, &overflow);
    if (overflow || rank == 0 || along < -rank || along >= rank) return NOT_HANDLED_MARK;
    if (along < 0) along += rank;
    if (along >= PyTuple_GET_SIZE(self->attrs)) return NOT_HANDLED_MARK;
    long long total = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *s = shape, *dims;
        if (k && !strong_array(items[k], &nodes[k], &s)) return NOT_HANDLED_MARK;
        dims = SLOT(s, off_dims);
        if (SLOT(s, off_dtype) != dtype || !PyTuple_CheckExact(dims) || PyTuple_GET_SIZE(dims) != rank)
            return NOT_HANDLED_MARK;
        PyObject *depth = SLOT(nodes[k], off_depth);
        if (depth == NULL || !PyLong_CheckExact(depth) || PyLong_AsLongLongAndOverflow(depth, &overflow) == traced_depth ||
            overflow)
            return NOT_HANDLED_MARK;
        for (Py_ssize_t d = 0; d < rank; d++) {
            PyObject *size = PyTuple_GET_ITEM(dims, d), *own = PyTuple_GET_ITEM(first_dims, d);
            if (!PyLong_CheckExact(size)) return NOT_HANDLED_MARK; /* a trace's symbolic size */
            long long value = PyLong_AsLongLongAndOverflow(size, &overflow);
            if (overflow) return NOT_HANDLED_MARK;
            if (d == along) {
                if (value <= 0) return NOT_HANDLED_MARK; /* an empty part: left out by the fallback */
                total += value;
            } else if (size != own && value != PyLong_AsLongLongAndOverflow(own, &overflow)) {
                return NOT_HANDLED_MARK; /* the rules' error */
            }
        }
    }
    if (PyErr_Occurred()) return NULL;
    if (SLOT(nodes[0], off_buffer) != Py_None && SLOT(nodes[n - 1], off_buffer) != Py_None)
        return NOT_HANDLED_MARK; /* the ends computed: perhaps copied at once */
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *recent = PyDict_GetItemWithError(self->extended, str_recent);
    if (recent == NULL) return PyErr_Occurred() ? NULL : NOT_HANDLED_MARK;
    PyObject *last_ref = PyDict_GetItemWithError(self->extended, str_last);
    int extending = last_ref == NULL && PyErr_Occurred() ? -1 : extends_latest(last_ref, items[0], nodes[0]);
    if (extending <= 0) return extending < 0 ? NULL : NOT_HANDLED_MARK;
    int found = remembered_from(recent, nodes[0]);
    if (found) return found < 0 ? NULL : NOT_HANDLED_MARK;
    PyObject *dims = PyTuple_New(rank), *operands = PyTuple_New(n), *made_shape = NULL, *out = NULL;
    if (dims == NULL || operands == NULL) goto done;
    for (Py_ssize_t d = 0; d < rank; d++) {
        PyObject *size = d == along ? PyLong_FromLongLong(total) : Py_NewRef(PyTuple_GET_ITEM(first_dims, d));
        if (size == NULL) goto done;
        PyTuple_SET_ITEM(dims, d, size);
    }
    for (Py_ssize_t k = 0; k < n; k++) PyTuple_SET_ITEM(operands, k, Py_NewRef(nodes[k]));
    made_shape = PyObject_CallFunctionObjArgs((PyObject *)shape_type, dims, dtype, NULL);
    if (made_shape == NULL) goto done;
    out = record_op(str_concatenate, operands, PyTuple_GET_ITEM(self->attrs, along), made_shape);
    if (out != NULL && Py_TYPE(out) == array_type) { /* the latest result, as extend makes it */
        PyObject *ref = PyWeakref_NewRef(((Handle *)out)->node, NULL);
        if (ref == NULL || PyDict_SetItem(self->extended, str_last, ref)) Py_CLEAR(out);
        Py_XDECREF(ref);
    }
done:
    Py_XDECREF(dims);
    Py_XDECREF(operands);
    Py_XDECREF(made_shape);
    return out;
}

static PyObject *join_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Join *self = (Join *)callable;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (nargs == 1 && nkw <= 1 && array_type != NULL && node_type != NULL && wrap_fn != NULL) {
        PyObject *axis = zero;
        if (nkw == 1) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, 0);
            axis = name == str_axis || PyUnicode_Compare(name, str_axis) == 0 ? args[1] : NULL;
            if (axis == NULL && PyErr_Occurred()) return NULL;
        }
        if (axis != NULL) {
            PyObject *out = join_in_c(self, args[0], axis);
            if (out != NOT_HANDLED_MARK) return out;
        }
    }
    return PyObject_Vectorcall(self->fallback, args, nargsf, kwnames);
}

static PyObject *join_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *attrs, *extended, *fallback;
    Py_ssize_t most;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Join takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!nO:Join", &PyTuple_Type, &attrs, &PyDict_Type, &extended, &most, &fallback))
        return NULL;
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "Join: the fallback must be callable");
        return NULL;
    }
    Join *self = (Join *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = join_vectorcall;
    self->attrs = Py_NewRef(attrs);
    self->extended = Py_NewRef(extended);
    self->most = most;
    self->fallback = Py_NewRef(fallback);
    return (PyObject *)self;
}

static int join_traverse(Join *self, visitproc visit, void *arg) {
    Py_VISIT(self->attrs);
    Py_VISIT(self->extended);
    Py_VISIT(self->fallback);
    Py_VISIT(self->dict);
    return 0;
}

static int join_clear(Join *self) {
    Py_CLEAR(self->attrs);
    Py_CLEAR(self->extended);
    Py_CLEAR(self->fallback);
    Py_CLEAR(self->dict);
    return 0;
}

static void join_dealloc(Join *self) {
    PyObject_GC_UnTrack(self);
    join_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef join_members[] = {
    {"fallback", T_OBJECT_EX, offsetof(Join, fallback), READONLY, "The Python definition, for other calls."},
    {"__dictoffset__", T_PYSSIZET, offsetof(Join, dict), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Join, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyMethodDef join_methods[] = {
    {"__reduce__", elementwise_reduce, METH_NOARGS, "Pickled by its qualified name."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject join_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.Join",
    .tp_doc = "Join(attrs, extended, most, fallback): concat's extending joins in C, the rest the fallback's.",
    .tp_basicsize = sizeof(Join),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = join_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Join, vectorcall),
    .tp_dictoffset = offsetof(Join, dict),
    .tp_descr_get = elementwise_get,
    .tp_dealloc = (destructor)join_dealloc,
    .tp_traverse = (traverseproc)join_traverse,
    .tp_clear = (inquiry)join_clear,
    .tp_members = join_members,
    .tp_methods = join_methods,
};

/* --- windows' common cases ------------------------------------------------------------- */

/* ``x[key]`` for a key of Python ints and unit-step slices with int or None bounds (a
   loop's windows, whose starts and often lengths are new at each step; a row ``x[i]``),
   recorded as api.indexing.window_index records it and made a view of ``x`` as
   api.views._window makes it, from C: a window of a new length ran its Python path in
   ~11 us, a row 4 us. An element of an array that is no view (an int for every axis:
   ``sort(x)[n // 2]``) is recorded as api.indexing.integer_index records it, and is no view
   (~2.1 us in Python); a view's, and a computed array's (a GPU's), are the Python path's,
   which copies the element (``views.element_copy``, the transfers' ``load_element``). The plan of a
   window's sizes is window_index's own (found in its table, made by it on a miss). None
   where the Python path decides (``window_index``'s cases, a weakly typed array, a trace). */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *slices;        /* window_index's plans by (dims, dtype, window, kept): _SLICES */
    Py_ssize_t slices_kept;  /* the plans it keeps, emptied when it holds so many (_WINDOWS_MAX) */
    PyObject *plan;          /* (shape, window, kept) -> the plan, made and kept as window_index makes it, or None */
    PyObject *index_buffers; /* the 0-d int64 buffers of the first start positions (indexing._INDEX_BUFFERS) */
    PyObject *index_shape;   /* their Shape */
    PyObject *index_node;    /* i -> a ready node of a start position past them (indexing._index_node) */
    PyObject *attach;        /* (x, window, key) -> the window made a view of x (views._window's attach) */
    PyTypeObject *view_of;   /* trace.views.ViewOf: a view's record */
    PyTypeObject *family;    /* trace.views.Family: a root's record */
    PyTypeObject *index;     /* api.views.Index: the step of ``x[key]`` */
    Py_ssize_t off_view_family, off_view_steps, off_view_writable, off_view_layout, off_view_held;
    Py_ssize_t off_family_views, off_family_prune_at, off_family_pin, off_family_bounds, off_index_key;
    int max_rank;
} Window;


/* A ready node of start position ``i``, as indexing._index_node makes it. */
static PyObject *start_node(Window *self, Py_ssize_t i) {
    if (i < PyTuple_GET_SIZE(self->index_buffers))
        return ready_node(PyTuple_GET_ITEM(self->index_buffers, i), self->index_shape, Py_None);
    PyObject *number = PyLong_FromSsize_t(i);
    if (number == NULL) return NULL;
    PyObject *node = PyObject_CallOneArg(self->index_node, number);
    Py_DECREF(number);
    return node;
}

/* Whether a window keeps every one of ``rank`` axes (ranges, no ints) of an array none of
   whose ``sizes`` is 0 (an empty array's windows are the rules'). */
static int all_kept_and_sized(const int *kept, const Py_ssize_t *sizes, Py_ssize_t rank) {
    for (Py_ssize_t i = 0; i < rank; i++)
        if (!kept[i] || sizes[i] <= 0) return 0;
    return 1;
}

static PyObject *str_slice_sizes;

/* The plan of a window keeping every axis: ``({"slice_sizes": window}, Shape(window,
   dtype), None, None)``, what indexing._slice_plan makes of it (the window's counts are in
   range by construction: dynamic_slice's rule holds). */
static PyObject *window_plan(PyObject *window, PyObject *dtype) {
    PyObject *sizes = PyDict_New();
    if (sizes == NULL) return NULL;
    if (PyDict_SetItem(sizes, str_slice_sizes, window)) {
        Py_DECREF(sizes);
        return NULL;
    }
    PyObject *sliced = PyObject_CallFunctionObjArgs((PyObject *)shape_type, window, dtype, NULL);
    PyObject *plan = sliced == NULL ? NULL : PyTuple_Pack(4, sizes, sliced, Py_None, Py_None);
    Py_DECREF(sizes);
    Py_XDECREF(sliced);
    return plan;
}

/* The window's node (not yet wrapped) of ``node`` of ``shape``, or NOT_HANDLED_MARK. */
static PyObject *window_in_c(Window *self, PyObject *node, PyObject *shape, PyObject *key, int elements,
                             int *element) {
    PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype);
    PyObject *single[1] = {key};
    PyObject *const *parts = single;
    Py_ssize_t n_parts = 1;
    if (PyTuple_CheckExact(key)) {
        parts = &PyTuple_GET_ITEM(key, 0);
        n_parts = PyTuple_GET_SIZE(key);
    }
    if (!PyTuple_CheckExact(dims)) return NOT_HANDLED_MARK;
    Py_ssize_t rank = PyTuple_GET_SIZE(dims);
    if (n_parts > rank || rank > self->max_rank) return NOT_HANDLED_MARK;
    long long limit, depth;
    if (pending_limit(&limit) < 0) return NULL;
    depth = PyLong_AsLongLong(SLOT(node, off_depth));
    if (depth == -1 && PyErr_Occurred()) return NULL;
    if (limit > 0 && (depth > 0 ? depth : 0) + 2 > limit) return NOT_HANDLED_MARK;
    Py_ssize_t starts[8], counts[8], sizes[8];
    int kept[8], whole = 1, any_slice = 0;
    for (Py_ssize_t i = 0; i < rank; i++) {
        sizes[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(dims, i));
        if (sizes[i] == -1 && PyErr_Occurred()) return NULL;
        starts[i] = 0;
        counts[i] = sizes[i];
        kept[i] = 1;
    }
    for (Py_ssize_t axis = 0; axis < n_parts; axis++) {
        PyObject *k = parts[axis];
        Py_ssize_t n = sizes[axis];
        if (PyLong_CheckExact(k)) {
            int overflow = 0;
            long long i = PyLong_AsLongLongAndOverflow(k, &overflow);
            if (i == -1 && PyErr_Occurred()) return NULL;
            if (overflow || i < -n || i >= n) return NOT_HANDLED_MARK;
            starts[axis] = (Py_ssize_t)(i < 0 ? i + n : i);
            counts[axis] = 1;
            kept[axis] = 0;
            whole = 0;
        } else if (PySlice_Check(k)) {
            PySliceObject *s = (PySliceObject *)k;
            if (!((s->start == Py_None || PyLong_CheckExact(s->start)) && (s->stop == Py_None || PyLong_CheckExact(s->stop))))
                return NOT_HANDLED_MARK;
            if (s->step != Py_None) {
                if (!PyLong_CheckExact(s->step)) return NOT_HANDLED_MARK;
                int overflow = 0;
                long long step = PyLong_AsLongLongAndOverflow(s->step, &overflow);
                if (step == -1 && PyErr_Occurred()) return NULL;
                if (overflow || step != 1) return NOT_HANDLED_MARK;
            }
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(k, &start, &stop, &step) < 0) return NULL;
            PySlice_AdjustIndices(n, &start, &stop, step);
            starts[axis] = start;
            counts[axis] = stop > start ? stop - start : 0;
            if (counts[axis] != n) whole = 0;
            any_slice = 1;
        } else {
            return NOT_HANDLED_MARK;
        }
    }
    *element = !any_slice && n_parts == rank;
    if (whole || (*element && !elements)) return NOT_HANDLED_MARK; /* the whole array, or an element refused */
    PyObject *window = PyTuple_New(rank), *kept_tuple = PyTuple_New(rank), *plan_key = NULL, *plan = NULL;
    PyObject *operands = NULL, *out = NULL;
    if (window == NULL || kept_tuple == NULL) goto done;
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *count = PyLong_FromSsize_t(counts[i]);
        if (count == NULL) goto done;
        PyTuple_SET_ITEM(window, i, count);
        PyTuple_SET_ITEM(kept_tuple, i, Py_NewRef(kept[i] ? Py_True : Py_False));
    }
    if ((plan_key = PyTuple_Pack(4, dims, dtype, window, kept_tuple)) == NULL) goto done;
    plan = PyDict_GetItemWithError(self->slices, plan_key);
    if (plan != NULL) {
        Py_INCREF(plan);
    } else if (!PyErr_Occurred() && all_kept_and_sized(kept, sizes, rank)) {
        /* ranges on every axis of a non-empty array (a loop's window of a new length):
           window_index's plan made here, as _slice_plan makes it (the slice's attributes
           and its shape, no reshape), where its Python path took ~3 us of the window */
        plan = window_plan(window, dtype);
        if (plan == NULL) goto done;
        if (PyDict_GET_SIZE(self->slices) >= self->slices_kept) PyDict_Clear(self->slices);
        if (PyDict_SetItem(self->slices, plan_key, plan)) goto done;
    } else {
        if (PyErr_Occurred()) goto done;
        PyObject *kept_list = PySequence_List(kept_tuple);
        if (kept_list == NULL) goto done;
        PyObject *call[] = {shape, window, kept_list};
        plan = PyObject_Vectorcall(self->plan, call, 3, NULL);
        Py_DECREF(kept_list);
        if (plan == NULL) goto done;
    }
    if (plan == Py_None) { /* an empty array: the rules decide */
        out = NOT_HANDLED_MARK;
        goto done;
    }
    if (!PyTuple_CheckExact(plan) || PyTuple_GET_SIZE(plan) != 4) {
        PyErr_SetString(PyExc_TypeError, "window: a plan is (sizes, sliced, drop, dropped)");
        goto done;
    }
    if ((operands = PyTuple_New(rank + 1)) == NULL) goto done;
    PyTuple_SET_ITEM(operands, 0, Py_NewRef(node));
    for (Py_ssize_t i = 0; i < rank; i++) {
        PyObject *start = start_node(self, starts[i]);
        if (start == NULL) goto done;
        PyTuple_SET_ITEM(operands, i + 1, start);
    }
    PyObject *args[] = {str_dynamic_slice, operands, PyTuple_GET_ITEM(plan, 0), PyTuple_GET_ITEM(plan, 1)};
    out = derive(NULL, args, 4);
    if (out != NULL && PyTuple_GET_ITEM(plan, 2) != Py_None) {
        PyObject *on = PyTuple_Pack(1, out);
        PyObject *reshape_args[] = {str_reshape, on, PyTuple_GET_ITEM(plan, 2), PyTuple_GET_ITEM(plan, 3)};
        PyObject *reshaped = on == NULL ? NULL : derive(NULL, reshape_args, 4);
        Py_XDECREF(on);
        Py_SETREF(out, reshaped);
    }
done:
    Py_XDECREF(window);
    Py_XDECREF(kept_tuple);
    Py_XDECREF(plan_key);
    Py_XDECREF(plan);
    Py_XDECREF(operands);
    return out;
}

/* ``Family.add``'s pruning of ``family``'s list ``views`` (due: its length reached
   ``prune_at``): the dead views' references dropped in place and ``prune_at`` set to twice
   the live ones (at least 8), 1 when done; 0 where the family has the bounds of its views
   worked out (``Family.overlapping``), whose rows Python's ``add`` moves with the list; -1
   on error. A loop's windows, each dropped before the next, took Python's ``attach`` at
   every eighth. */
static int prune_views(Window *self, PyObject *family, PyObject *views) {
    PyObject *bounds = SLOT(family, self->off_family_bounds);
    if (bounds != Py_None) return 0;
    Py_ssize_t kept = 0, n = PyList_GET_SIZE(views);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *ref = PyList_GET_ITEM(views, i);
        if (!PyWeakref_CheckRef(ref)) return 0;
        if (PyWeakref_GetObject(ref) == Py_None) continue; /* borrowed: compared only */
        if (kept != i) { /* moved down: the list's reference moves with it */
            PyObject *dead = PyList_GET_ITEM(views, kept);
            PyList_SET_ITEM(views, kept, ref);
            PyList_SET_ITEM(views, i, dead);
        }
        kept++;
    }
    if (PyList_SetSlice(views, kept, n, NULL)) return -1;
    PyObject *due = PyLong_FromSsize_t(Py_MAX(8, 2 * kept)); /* ``max(8, 2 * len(views))`` */
    if (due == NULL) return -1;
    Py_SETREF(SLOT(family, self->off_family_prune_at), due);
    return 1;
}

/* ``array`` (a new Array: ``step``'s value on ``x``) made a view of ``x``'s root as
   trace.views.attach makes it, with ``placed`` its layout (None: worked out when asked) and
   ``step_writable`` its step's ``writable``; where ``step`` is NULL, a window's
   ``Index(key)``, made only once the view is sure to be made here: 1
   when done, 0 where the Python ``attach`` is to do it (a record of another type; a family
   whose list of views is due for a pruning ``prune_views`` leaves to it), -1 on error.
   Making the record and the view's weak reference here took ~1.8 us off a window of Python
   (``_attach_window``, ``attach``, ``Family.add`` and two ``__init__``). A root with no record yet gets its
   family here too, made by its type (``Family(x)``, the definition): a loop's window of
   the array its last step made (``buf[1:]`` of a ring buffer, ``h[-1:]`` of a grown
   history) took the Python path at every step for it, ~1.8 us more. */
static int attach_step(Window *self, PyObject *x, PyObject *array, PyObject *step, PyObject *key, PyObject *placed,
                       int step_writable) {
    PyObject *record = ((Handle *)x)->base, *family, *steps, *writable;
    if (record == NULL || record == Py_None) {
        record = PyObject_CallOneArg((PyObject *)self->family, x);
        if (record == NULL) return -1;
        Py_XSETREF(((Handle *)x)->base, record); /* ``base._base = family``, held by the root */
    }
    if (Py_IS_TYPE(record, self->view_of)) {
        family = SLOT(record, self->off_view_family);
        steps = SLOT(record, self->off_view_steps);
        writable = SLOT(record, self->off_view_writable);
        if (family == NULL || steps == NULL || writable == NULL || !PyTuple_CheckExact(steps) ||
            !Py_IS_TYPE(family, self->family))
            return 0;
    } else if (Py_IS_TYPE(record, self->family)) {
        family = record;
        steps = empty_tuple;
        writable = Py_True;
    } else {
        return 0;
    }
    PyObject *views = SLOT(family, self->off_family_views), *prune_at = SLOT(family, self->off_family_prune_at);
    PyObject *pin = SLOT(family, self->off_family_pin);
    if (views == NULL || prune_at == NULL || pin == NULL || !(views == Py_None || PyList_CheckExact(views)))
        return 0;
    if (views != Py_None) {
        Py_ssize_t due = PyLong_AsSsize_t(prune_at);
        if (due == -1 && PyErr_Occurred()) return -1;
        if (PyList_GET_SIZE(views) >= due) {
            int pruned = prune_views(self, family, views);
            if (pruned <= 0) return pruned;
        }
    }
    int open = PyObject_IsTrue(writable); /* ``writable and step.writable`` */
    if (open < 0) return -1;
    if (step == NULL) { /* a window's: Index(key) */
        step = self->index->tp_alloc(self->index, 0);
        if (step == NULL) return -1;
        SLOT(step, self->off_index_key) = Py_NewRef(key);
    } else {
        Py_INCREF(step);
    }
    Py_ssize_t n_steps = PyTuple_GET_SIZE(steps);
    PyObject *chain = PyTuple_New(n_steps + 1);
    if (chain == NULL) {
        Py_DECREF(step);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n_steps; i++) PyTuple_SET_ITEM(chain, i, Py_NewRef(PyTuple_GET_ITEM(steps, i)));
    PyTuple_SET_ITEM(chain, n_steps, step);
    PyObject *view_of = self->view_of->tp_alloc(self->view_of, 0);
    PyObject *ref = view_of == NULL ? NULL : PyWeakref_NewRef(array, NULL);
    if (ref == NULL) {
        Py_XDECREF(view_of);
        Py_DECREF(chain);
        return -1;
    }
    SLOT(view_of, self->off_view_family) = Py_NewRef(family);
    SLOT(view_of, self->off_view_steps) = chain;
    SLOT(view_of, self->off_view_writable) = Py_NewRef(open && step_writable ? Py_True : Py_False);
    SLOT(view_of, self->off_view_layout) = Py_NewRef(placed);
    SLOT(view_of, self->off_view_held) = Py_NewRef(Py_None);
    Py_XSETREF(((Handle *)array)->base, view_of);
    int failed;
    if (views == Py_None) {
        PyObject *list = PyList_New(1);
        failed = list == NULL;
        if (!failed) {
            PyList_SET_ITEM(list, 0, ref);
            ref = NULL;
            Py_SETREF(SLOT(family, self->off_family_views), list);
        }
    } else {
        failed = PyList_Append(views, ref);
    }
    Py_XDECREF(ref);
    if (!failed && pin != Py_None) { /* an exported family: the pin adopts the view (``Pin.adopt``) */
        PyObject *adopted = PyObject_CallMethod(pin, "adopt", "O", array);
        failed = adopted == NULL;
        Py_XDECREF(adopted);
    }
    return failed ? -1 : 1;
}

static PyObject *window_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Window *self = (Window *)callable;
    if (kwnames != NULL || PyVectorcall_NARGS(nargsf) != 2) {
        PyErr_SetString(PyExc_TypeError, "Window(x, key) takes two positional arguments");
        return NULL;
    }
    PyObject *x = args[0], *key = args[1], *node, *shape;
    if (array_type == NULL || node_type == NULL || wrap_fn == NULL || !strong_array(x, &node, &shape) ||
        !(PySlice_Check(key) || PyTuple_CheckExact(key) || PyLong_CheckExact(key)))
        Py_RETURN_NONE;
    int tracing = tracing_now();
    if (tracing) return tracing < 0 ? NULL : Py_NewRef(Py_None);
    /* an element of a view, or of a computed array (a GPU's, which C's element reads do not
       take): the Python path's, which copies it out of the computed memory */
    PyObject *record = ((Handle *)x)->base;
    int element = 0, elements = (record == NULL || !Py_IS_TYPE(record, self->view_of)) &&
                                SLOT(node, off_buffer) == Py_None;
    PyObject *out = window_in_c(self, node, shape, key, elements, &element);
    if (out == NOT_HANDLED_MARK) Py_RETURN_NONE;
    if (out == NULL) return NULL;
    PyObject *array = wrapped(out);
    if (array == NULL || element) return array; /* an element is a copy, as NumPy's scalar: no view */
    int attached = Py_IS_TYPE(array, array_type) ? attach_step(self, x, array, NULL, key, Py_None, 1) : 0;
    if (attached) return attached < 0 ? (Py_DECREF(array), NULL) : array;
    PyObject *call[] = {x, array, key};
    PyObject *view = PyObject_Vectorcall(self->attach, call, 3, NULL);
    Py_DECREF(array);
    return view;
}

static PyObject *window_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *slices, *plan, *index_buffers, *index_shape, *index_node, *attach, *view_of, *family, *index;
    int max_rank;
    Py_ssize_t slices_kept;
    if (kwargs != NULL && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "Window takes positional arguments only");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!OO!OOOiO!O!O!n:Window", &PyDict_Type, &slices, &plan, &PyTuple_Type,
                          &index_buffers, &index_shape, &index_node, &attach, &max_rank, &PyType_Type, &view_of,
                          &PyType_Type, &family, &PyType_Type, &index, &slices_kept))
        return NULL;
    PyTypeObject *view_type = (PyTypeObject *)view_of, *family_of = (PyTypeObject *)family,
                 *index_type = (PyTypeObject *)index;
    Py_ssize_t offsets[10];
    if (slot_offset(view_type, "family", &offsets[0]) || slot_offset(view_type, "steps", &offsets[1]) ||
        slot_offset(view_type, "writable", &offsets[2]) || slot_offset(view_type, "_layout", &offsets[3]) ||
        slot_offset(view_type, "held", &offsets[4]) || slot_offset(family_of, "views", &offsets[5]) ||
        slot_offset(family_of, "prune_at", &offsets[6]) || slot_offset(family_of, "pin", &offsets[7]) ||
        slot_offset(index_type, "key", &offsets[8]) || slot_offset(family_of, "bounds", &offsets[9]))
        return NULL;
    if (max_rank < 1 || max_rank > 8) {
        PyErr_SetString(PyExc_ValueError, "Window: the largest rank taken must be 1 to 8");
        return NULL;
    }
    if (!PyCallable_Check(plan) || !PyCallable_Check(index_node) || !PyCallable_Check(attach)) {
        PyErr_SetString(PyExc_TypeError, "Window: plan, index_node and attach must be callable");
        return NULL;
    }
    if (shape_type == NULL || !PyObject_TypeCheck(index_shape, shape_type)) {
        PyErr_SetString(PyExc_TypeError, "Window: index_shape must be a Shape (after configure)");
        return NULL;
    }
    Window *self = (Window *)type->tp_alloc(type, 0);
    if (self == NULL) return NULL;
    self->vectorcall = window_vectorcall;
    self->slices = Py_NewRef(slices);
    self->slices_kept = slices_kept;
    self->plan = Py_NewRef(plan);
    self->index_buffers = Py_NewRef(index_buffers);
    self->index_shape = Py_NewRef(index_shape);
    self->index_node = Py_NewRef(index_node);
    self->attach = Py_NewRef(attach);
    self->view_of = (PyTypeObject *)Py_NewRef(view_of);
    self->family = (PyTypeObject *)Py_NewRef(family);
    self->index = (PyTypeObject *)Py_NewRef(index);
    self->off_view_family = offsets[0];
    self->off_view_steps = offsets[1];
    self->off_view_writable = offsets[2];
    self->off_view_layout = offsets[3];
    self->off_view_held = offsets[4];
    self->off_family_views = offsets[5];
    self->off_family_prune_at = offsets[6];
    self->off_family_pin = offsets[7];
    self->off_index_key = offsets[8];
    self->off_family_bounds = offsets[9];
    self->max_rank = max_rank;
    return (PyObject *)self;
}

static int window_traverse(Window *self, visitproc visit, void *arg) {
    Py_VISIT(self->slices);
    Py_VISIT(self->plan);
    Py_VISIT(self->index_buffers);
    Py_VISIT(self->index_shape);
    Py_VISIT(self->index_node);
    Py_VISIT(self->attach);
    Py_VISIT(self->view_of);
    Py_VISIT(self->family);
    Py_VISIT(self->index);
    return 0;
}

static int window_clear(Window *self) {
    Py_CLEAR(self->slices);
    Py_CLEAR(self->plan);
    Py_CLEAR(self->index_buffers);
    Py_CLEAR(self->index_shape);
    Py_CLEAR(self->index_node);
    Py_CLEAR(self->attach);
    Py_CLEAR(self->view_of);
    Py_CLEAR(self->family);
    Py_CLEAR(self->index);
    return 0;
}

static void window_dealloc(Window *self) {
    PyObject_GC_UnTrack(self);
    window_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject window_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plaidarray.trace._graph.Window",
    .tp_doc = "Window(slices, plan, index_buffers, index_shape, index_node, attach, max_rank, ViewOf, Family, Index): x[key] for a "
              "window's common keys in C, called with (x, key); None for the rest.",
    .tp_basicsize = sizeof(Window),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = window_new,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Window, vectorcall),
    .tp_dealloc = (destructor)window_dealloc,
    .tp_traverse = (traverseproc)window_traverse,
    .tp_clear = (inquiry)window_clear,
};

/* The Window that ``x[key]`` of an Array asks first for a slice, tuple or int key (None:
   none, every key goes to Array._getitem). */
static PyObject *use_window(PyObject *self, PyObject *window) {
    (void)self;
    if (window != Py_None && !Py_IS_TYPE(window, &window_type)) {
        PyErr_SetString(PyExc_TypeError, "use_window(window: Window | None)");
        return NULL;
    }
    Py_XSETREF(subscript_window, window == Py_None ? NULL : Py_NewRef(window));
    Py_RETURN_NONE;
}

/* attach_view(base, result, step, placed) -> whether ``result`` (a new Array, ``step``'s value
   on ``base``) was made a view of ``base``'s root here, as trace.views.attach makes it, with
   the family, record types and slots of the Window x[key] asks (use_window); False where
   Python's ``attach`` is to make it (no Window in use, an array of another type, or
   attach_step's cases): a view a recipe replays (``flip``, ``.T``, a reshape) ~0.25 us less. */
static int attr_true(PyObject *obj, PyObject *name);
static PyObject *str_writable; /* "writable" (configure_reads' strings) */

static PyObject *attach_view(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "attach_view(base, result, step, placed)");
        return NULL;
    }
    PyObject *base = args[0], *result = args[1], *step = args[2];
    if (subscript_window == NULL || array_type == NULL || base == result || !Py_IS_TYPE(base, array_type) ||
        !Py_IS_TYPE(result, array_type))
        Py_RETURN_FALSE;
    int writable = attr_true(step, str_writable);
    if (writable < 0) return NULL;
    int done = attach_step((Window *)subscript_window, base, result, step, NULL, args[3], writable);
    if (done < 0) return NULL;
    return Py_NewRef(done ? Py_True : Py_False);
}

/* --- signature ------------------------------------------------------------------------- */

/* A recorded function's call as its recipes are keyed (api/recipes.py: _signature, _add,
   _add_array, which define it): configure_signature gives the tags and types it needs. */
enum { TAG_ARRAY, TAG_VIEW, TAG_TRUE, TAG_FALSE, TAG_FLOAT, TAG_COMPLEX, TAG_DTYPE, TAG_TYPE, TAG_SLICE,
       TAG_KEYWORDS, TAG_TUPLE, TAG_LIST, TAG_COUNT };
static PyObject *tags[TAG_COUNT];
static PyTypeObject *dtype_type; /* numpy.dtype (view_of_type: trace.views.ViewOf) */
static Py_ssize_t max_nesting = -1;

static PyObject *configure_signature(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *tag_tuple, *array, *view_of, *dtype;
    Py_ssize_t nesting;
    if (!PyArg_ParseTuple(args, "O!O!O!O!n", &PyTuple_Type, &tag_tuple, &PyType_Type, &array, &PyType_Type, &view_of,
                          &PyType_Type, &dtype, &nesting))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)array, &handle_type)) {
        PyErr_SetString(PyExc_TypeError, "configure_signature: the array type must derive from ArrayHandle");
        return NULL;
    }
    if (PyTuple_GET_SIZE(tag_tuple) != TAG_COUNT) {
        PyErr_Format(PyExc_ValueError, "configure_signature: expected %d tags", TAG_COUNT);
        return NULL;
    }
    for (int i = 0; i < TAG_COUNT; i++) Py_XSETREF(tags[i], Py_NewRef(PyTuple_GET_ITEM(tag_tuple, i)));
    Py_XSETREF(array_type, (PyTypeObject *)Py_NewRef(array)); /* the one configure_elementwise takes */
    Py_XSETREF(view_of_type, (PyTypeObject *)Py_NewRef(view_of));
    Py_XSETREF(dtype_type, (PyTypeObject *)Py_NewRef(dtype));
    max_nesting = nesting;
    Py_RETURN_NONE;
}

/* Append an Array argument (``_add_array``); 0 where it has no signature (weakly typed). */
static int add_array(PyObject *key, PyObject *array, PyObject *arrays, PyObject *nodes) {
    PyObject *node = ((Handle *)array)->node, *shape;
    if (node == NULL || !is_node(node)) return -1;
    if (SLOT(node, off_weak) != Py_False) return SLOT(node, off_weak) == NULL ? -1 : 0;
    if ((shape = shape_of(node)) == NULL) return -1;
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    if (dims == NULL || dtype == NULL) return -1;
    PyObject *base = ((Handle *)array)->base;
    Py_ssize_t seen = -1;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(nodes); i++)
        if (PyList_GET_ITEM(nodes, i) == node) {
            seen = i;
            break;
        }
    PyObject *index = PyLong_FromSsize_t(seen);
    if (index == NULL) return -1;
    PyObject *tag = base != NULL && Py_TYPE(base) == view_of_type ? tags[TAG_VIEW] : tags[TAG_ARRAY];
    PyObject *device = slot(node, off_device, "device");
    int failed = device == NULL || PyList_Append(key, tag) || PyList_Append(key, dims) || PyList_Append(key, dtype) ||
                 PyList_Append(key, device) || PyList_Append(key, index) || PyList_Append(arrays, array) ||
                 PyList_Append(nodes, node);
    Py_DECREF(index);
    return failed ? -1 : 1;
}

static int append_two(PyObject *key, PyObject *tag, PyObject *value) {
    return PyList_Append(key, tag) || PyList_Append(key, value) ? -1 : 1;
}

/* Append any argument (``_add``): 1, 0 where it has no signature, -1 on error. */
static int add_value(PyObject *key, PyObject *value, PyObject *arrays, PyObject *nodes, Py_ssize_t depth) {
    PyTypeObject *kind = Py_TYPE(value);
    if (kind == &PyLong_Type || kind == &PyUnicode_Type || value == Py_None || value == Py_Ellipsis)
        return PyList_Append(key, value) ? -1 : 1;
    if (kind == array_type) return add_array(key, value, arrays, nodes);
    if (kind == &PyBool_Type) return PyList_Append(key, tags[value == Py_True ? TAG_TRUE : TAG_FALSE]) ? -1 : 1;
    if (kind == &PyFloat_Type) {
        double v = PyFloat_AS_DOUBLE(value);
        if (v != 0.0 && v == v) return append_two(key, tags[TAG_FLOAT], value);
        PyObject *text = PyObject_Repr(value);
        if (text == NULL) return -1;
        int done = append_two(key, tags[TAG_FLOAT], text);
        Py_DECREF(text);
        return done;
    }
    if (kind == &PyTuple_Type || kind == &PyList_Type) {
        if (depth == max_nesting) return 0;
        PyObject *length = PyLong_FromSsize_t(PySequence_Fast_GET_SIZE(value));
        if (length == NULL) return -1;
        int done = append_two(key, tags[kind == &PyTuple_Type ? TAG_TUPLE : TAG_LIST], length);
        Py_DECREF(length);
        if (done < 0) return -1;
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(value); i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(value, i);
            Py_INCREF(item); /* a list may change under a callback */
            if (Py_IS_TYPE(item, &PyLong_Type)) done = PyList_Append(key, item) ? -1 : 1;
            else if (Py_TYPE(item) == array_type) done = add_array(key, item, arrays, nodes);
            else done = add_value(key, item, arrays, nodes, depth + 1);
            Py_DECREF(item);
            if (done <= 0) return done;
        }
        return 1;
    }
    if (kind == &PySlice_Type) {
        PySliceObject *slice = (PySliceObject *)value;
        int done = PyList_Append(key, tags[TAG_SLICE]) ? -1 : 1;
        if (done > 0) done = add_value(key, slice->start, arrays, nodes, 0);
        if (done > 0) done = add_value(key, slice->stop, arrays, nodes, 0);
        if (done > 0) done = add_value(key, slice->step, arrays, nodes, 0);
        return done;
    }
    if (kind == &PyComplex_Type) {
        PyObject *text = PyObject_Repr(value);
        if (text == NULL) return -1;
        int done = append_two(key, tags[TAG_COMPLEX], text);
        Py_DECREF(text);
        return done;
    }
    if (PyObject_TypeCheck(value, dtype_type)) return append_two(key, tags[TAG_DTYPE], value);
    if (kind == &PyType_Type) return append_two(key, tags[TAG_TYPE], value);
    return 0;
}

static PyObject *signature(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (check_configured()) return NULL;
    if (array_type == NULL || max_nesting < 0) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph: signature was not configured");
        return NULL;
    }
    if (nargs != 4 || !PyTuple_Check(args[0]) || (args[1] != Py_None && !PyDict_Check(args[1])) ||
        !PyList_Check(args[2]) || !PyList_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "signature(args: tuple, kwargs: dict | None, arrays: list, nodes: list)");
        return NULL;
    }
    PyObject *call = args[0], *kwargs = args[1], *arrays = args[2], *nodes = args[3];
    PyObject *key = PyList_New(0);
    if (key == NULL) return NULL;
    int done = 1;
    for (Py_ssize_t i = 0; done > 0 && i < PyTuple_GET_SIZE(call); i++) {
        PyObject *value = PyTuple_GET_ITEM(call, i);
        if (Py_TYPE(value) == array_type) done = add_array(key, value, arrays, nodes);
        else if (Py_IS_TYPE(value, &PyLong_Type)) done = PyList_Append(key, value) ? -1 : 1;
        else done = add_value(key, value, arrays, nodes, 0);
    }
    if (done > 0 && kwargs != Py_None && PyDict_GET_SIZE(kwargs)) {
        done = PyList_Append(key, tags[TAG_KEYWORDS]) ? -1 : 1;
        Py_ssize_t position = 0;
        PyObject *name, *value;
        while (done > 0 && PyDict_Next(kwargs, &position, &name, &value)) {
            Py_INCREF(value);
            done = PyList_Append(key, name) ? -1 : add_value(key, value, arrays, nodes, 0);
            Py_DECREF(value);
        }
    }
    PyObject *out = done > 0 ? PyList_AsTuple(key) : done == 0 ? Py_NewRef(Py_None) : NULL;
    Py_DECREF(key);
    return out;
}

/* dynamic.generalize in C (its Python twin, ``dynamic._generalize_in_python``, says what
   it computes): ``sized`` is that module's table of each op's size and offset attribute
   names (None for an op with neither), and ``describe(op)`` fills an entry of it. Each
   size goes to ``values`` with True in ``sizes``, each offset with False. */

/* Appends the entries of ``seq`` to ``values`` and ``flag`` as many times to ``sizes``;
   -1 with an exception set on failure. */
static int extend_values(PyObject *values, PyObject *sizes, PyObject *seq, PyObject *flag) {
    PyObject *fast = PySequence_Fast(seq, "generalize: sizes must be a sequence");
    if (fast == NULL) return -1;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
        if (PyList_Append(values, PySequence_Fast_GET_ITEM(fast, k)) || PyList_Append(sizes, flag)) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return 0;
}

/* The tuple (first, second), taking both references (either may be NULL: then NULL). */
static PyObject *pair_of(PyObject *first, PyObject *second) {
    PyObject *pair = first != NULL && second != NULL ? PyTuple_New(2) : NULL;
    if (pair == NULL) {
        Py_XDECREF(first);
        Py_XDECREF(second);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, first);
    PyTuple_SET_ITEM(pair, 1, second);
    return pair;
}

/* ``attrs`` (a tuple of (name, value) pairs) with each size or offset attribute's value
   replaced by its length, its entries appended to ``values``; NULL on failure. */
static PyObject *erase_attrs(PyObject *attrs, PyObject *spec, PyObject *values, PyObject *sizes) {
    if (!PyTuple_Check(spec) || PyTuple_GET_SIZE(spec) != 2 || !PyTuple_Check(attrs)) {
        PyErr_SetString(PyExc_TypeError, "generalize: attributes are a tuple, an op's spec (sizes, offsets)");
        return NULL;
    }
    PyObject *size_names = PyTuple_GET_ITEM(spec, 0), *offset_names = PyTuple_GET_ITEM(spec, 1);
    Py_ssize_t n = PyTuple_GET_SIZE(attrs);
    PyObject *kept = PyTuple_New(n);
    if (kept == NULL) return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *pair = PyTuple_GET_ITEM(attrs, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "generalize: an attribute is a (name, value) pair");
            Py_DECREF(kept);
            return NULL;
        }
        PyObject *name = PyTuple_GET_ITEM(pair, 0), *value = PyTuple_GET_ITEM(pair, 1), *flag = NULL;
        int is_size = PySequence_Contains(size_names, name);
        int is_offset = is_size ? 0 : PySequence_Contains(offset_names, name);
        if (is_size < 0 || is_offset < 0) {
            Py_DECREF(kept);
            return NULL;
        }
        flag = is_size ? Py_True : is_offset ? Py_False : NULL;
        if (flag == NULL) {
            PyTuple_SET_ITEM(kept, k, Py_NewRef(pair));
            continue;
        }
        Py_ssize_t length = PyObject_Length(value);
        PyObject *erased = length < 0 ? NULL : pair_of(Py_NewRef(name), PyLong_FromSsize_t(length));
        if (erased == NULL || extend_values(values, sizes, value, flag)) {
            Py_XDECREF(erased);
            Py_DECREF(kept);
            return NULL;
        }
        PyTuple_SET_ITEM(kept, k, erased);
    }
    return kept;
}

static PyObject *generalize(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 3 || !PyDict_Check(args[0]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "generalize(sized: dict, describe, rows: tuple)");
        return NULL;
    }
    PyObject *sized = args[0], *describe = args[1], *rows = args[2];
    Py_ssize_t n = PyTuple_GET_SIZE(rows);
    PyObject *erased = PyTuple_New(n), *values = PyList_New(0), *sizes = PyList_New(0), *out = NULL;
    if (erased == NULL || values == NULL || sizes == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *row = PyTuple_GET_ITEM(rows, i), *item;
        if (!PyTuple_Check(row) || (PyTuple_GET_SIZE(row) != 2 && PyTuple_GET_SIZE(row) != 5)) {
            PyErr_SetString(PyExc_TypeError, "generalize: a row is (dims, dtype) or (op, attrs, operands, dims, dtype)");
            goto done;
        }
        Py_ssize_t width = PyTuple_GET_SIZE(row);
        PyObject *dims = PyTuple_GET_ITEM(row, width - 2), *dtype = PyTuple_GET_ITEM(row, width - 1);
        Py_ssize_t rank = PyObject_Length(dims);
        if (rank < 0) goto done;
        if (width == 2) {
            item = pair_of(PyLong_FromSsize_t(rank), Py_NewRef(dtype));
        } else {
            PyObject *op = PyTuple_GET_ITEM(row, 0), *attrs = PyTuple_GET_ITEM(row, 1), *spec;
            spec = PyDict_GetItemWithError(sized, op);
            if (spec != NULL) Py_INCREF(spec);
            else if (PyErr_Occurred() || (spec = PyObject_CallOneArg(describe, op)) == NULL) goto done;
            PyObject *kept = spec == Py_None ? Py_NewRef(attrs) : erase_attrs(attrs, spec, values, sizes);
            Py_DECREF(spec);
            if (kept == NULL) goto done;
            PyObject *rank_object = PyLong_FromSsize_t(rank);
            item = rank_object == NULL ? NULL : PyTuple_New(5);
            if (item == NULL) {
                Py_XDECREF(rank_object);
                Py_DECREF(kept);
                goto done;
            }
            PyTuple_SET_ITEM(item, 0, Py_NewRef(op));
            PyTuple_SET_ITEM(item, 1, kept);
            PyTuple_SET_ITEM(item, 2, Py_NewRef(PyTuple_GET_ITEM(row, 2)));
            PyTuple_SET_ITEM(item, 3, rank_object);
            PyTuple_SET_ITEM(item, 4, Py_NewRef(dtype));
        }
        if (item == NULL || extend_values(values, sizes, dims, Py_True)) {
            Py_XDECREF(item);
            goto done;
        }
        PyTuple_SET_ITEM(erased, i, item);
    }
    PyObject *value_tuple = PyList_AsTuple(values), *size_tuple = PyList_AsTuple(sizes);
    if (value_tuple != NULL && size_tuple != NULL) out = PyTuple_Pack(3, erased, value_tuple, size_tuple);
    Py_XDECREF(value_tuple);
    Py_XDECREF(size_tuple);
done:
    Py_XDECREF(erased);
    Py_XDECREF(values);
    Py_XDECREF(sizes);
    return out;
}

/* --- reads ----------------------------------------------------------------------------- */

/* A read of one pending value whose executable is cached: materialize.materialize([node]),
   the definition, with its walk, lookup (ExecutableCache.lookup's: its entries, the hit
   counted by its hit method) and the setting of the buffers in one call, and the executable's own run method
   between them. Every read of a value that a loop makes after its first step is one (~5 us
   in Python, of which ~2 the calls and checks between the walk, the lookup and the run).
   A miss whose structure is planned (baseline.PLANNED, found by its rows generalised here) is
   run from C where its entry there says how (quick_read: baseline.quick), else
   materialize.planned's, which makes the executable of a loop's read at a new size from the
   plan. Anything else (another miss, an executable due for another look, a device's other transfers,
   a backend with host ops, the first read after a loop's cut graphs, a traced placeholder)
   is decided by materialize.decide under the lock and run by materialize.finish, as
   materialize would: the walk made here is theirs. configure_reads gives what it reads. */
static PyObject *reads_entries, *reads_cache, *reads_hot, *reads_given, *reads_registry, *reads_cuts, *reads_host,
    *reads_decide, *reads_finish, *reads_materialize, *reads_kept, *reads_planned, *reads_structures,
    *reads_quick_runs, *reads_sized, *reads_describe;
static PyTypeObject *baseline_type;
static PyObject *str_current, *str_since_read, *str_backend,
    *str_cache_tag, *str_compiler, *str_host_ops, *str_device_call_ops, *str_returns_parameters,
    *str_run, *str_heat, *str_writable, *str_generation, *str_submitted, *str_seconds, *str_fuse_after, *str_used, *str_hit_counts,
    *str_hits, *str_digests, *str_remember;

static PyObject *configure_reads(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *lock, *entries, *cache, *hot, *given, *registry, *cuts, *baseline, *host, *decide, *finish,
        *materialize_fn, *kept, *planned, *structures, *quick_runs, *sized, *describe;
    if (!PyArg_ParseTuple(args, "OO!OO!O!O!O!O!OOOOO!OO!O!O!O:configure_reads", &lock, &PyDict_Type, &entries, &cache,
                          &PyDict_Type, &hot, &PyFrozenSet_Type, &given, &PyDict_Type, &registry, &PyDict_Type, &cuts,
                          &PyType_Type, &baseline, &host, &decide, &finish, &materialize_fn, &PyLong_Type, &kept,
                          &planned, &PyDict_Type, &structures, &PyDict_Type, &quick_runs, &PyDict_Type, &sized,
                          &describe))
        return NULL;
    if (check_configured()) return NULL;
    Py_XSETREF(reads_lock, Py_NewRef(lock));
    Py_XSETREF(reads_entries, Py_NewRef(entries));
    Py_XSETREF(reads_cache, Py_NewRef(cache));
    Py_XSETREF(reads_hot, Py_NewRef(hot));
    Py_XSETREF(reads_given, Py_NewRef(given));
    Py_XSETREF(reads_registry, Py_NewRef(registry));
    Py_XSETREF(reads_cuts, Py_NewRef(cuts));
    Py_XSETREF(baseline_type, (PyTypeObject *)Py_NewRef(baseline));
    Py_XSETREF(reads_host, Py_NewRef(host));
    Py_XSETREF(reads_decide, Py_NewRef(decide));
    Py_XSETREF(reads_finish, Py_NewRef(finish));
    Py_XSETREF(reads_materialize, Py_NewRef(materialize_fn));
    Py_XSETREF(reads_kept, Py_NewRef(kept));
    Py_XSETREF(reads_planned, Py_NewRef(planned));
    Py_XSETREF(reads_structures, Py_NewRef(structures));
    Py_XSETREF(reads_quick_runs, Py_NewRef(quick_runs));
    Py_XSETREF(reads_sized, Py_NewRef(sized));
    Py_XSETREF(reads_describe, Py_NewRef(describe));
    Py_RETURN_NONE;
}

/* Whether the attribute `name` of `obj` is true: 1, 0, or -1 on error. */
static int attr_true(PyObject *obj, PyObject *name) {
    PyObject *value = PyObject_GetAttr(obj, name);
    if (value == NULL) return -1;
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    return truth;
}

/* `counts[key] += 1` of a dict of ints (a count absent is 0); 0, or -1 on error. */
static int count_up(PyObject *counts, PyObject *key) {
    PyObject *before = PyDict_GetItemWithError(counts, key);
    if (before == NULL && PyErr_Occurred()) return -1;
    long long count = before == NULL ? 0 : PyLong_AsLongLong(before);
    if (count == -1 && PyErr_Occurred()) return -1;
    PyObject *after = PyLong_FromLongLong(count + 1);
    int failed = after == NULL || PyDict_SetItem(counts, key, after);
    Py_XDECREF(after);
    return failed ? -1 : 0;
}

/* ExecutableCache.hit(exe), counted as that method counts a hit (it is marked used, its count
   and the thread's hits go up), here: calling the method was ~0.4 us of each cached read.
   0, or -1 on error. */
static int count_hit(PyObject *exe) {
    PyObject *number = PyLong_FromVoidPtr(exe); /* id(exe) */
    PyObject *thread = PyLong_FromUnsignedLong(PyThread_get_thread_ident()); /* threading.get_ident() */
    PyObject *used = PyObject_GetAttr(reads_cache, str_used);
    PyObject *counts = PyObject_GetAttr(reads_cache, str_hit_counts); /* aging replaces it */
    PyObject *hits = PyObject_GetAttr(reads_cache, str_hits);
    int failed = number == NULL || thread == NULL || used == NULL || counts == NULL || hits == NULL ||
                 !PySet_Check(used) || !PyDict_Check(counts) || !PyDict_Check(hits);
    if (failed && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the executable cache's counts are not a set and dicts");
    failed = failed || PySet_Add(used, number) || count_up(counts, number) || count_up(hits, thread);
    Py_XDECREF(number);
    Py_XDECREF(thread);
    Py_XDECREF(used);
    Py_XDECREF(counts);
    Py_XDECREF(hits);
    return failed ? -1 : 0;
}

/* BaselineExecutable.needs_attention, as that property says it: fused code of its structure has
   landed since it was made (its heat's generation is not its own), or its structure is due
   (hot.Heat.due: not submitted, and run for hot.FUSE_AFTER_SECONDS); 1, 0, or -1 on error.
   Read here, where the property's call was ~0.2 us of each cached read. */
static int needs_attention(PyObject *exe) {
    PyObject *heat = PyObject_GetAttr(exe, str_heat);
    if (heat == NULL) return -1;
    PyObject *made = PyObject_GetAttr(exe, str_generation), *now = PyObject_GetAttr(heat, str_generation);
    int again = made == NULL || now == NULL ? -1 : PyObject_RichCompareBool(made, now, Py_NE);
    Py_XDECREF(made);
    Py_XDECREF(now);
    if (again == 0) {
        int submitted = attr_true(heat, str_submitted);
        again = submitted;
        if (submitted == 0) {
            PyObject *seconds = PyObject_GetAttr(heat, str_seconds);
            PyObject *after = PyDict_GetItemWithError(reads_hot, str_fuse_after); /* borrowed */
            if (after == NULL && !PyErr_Occurred())
                PyErr_SetString(PyExc_RuntimeError, "trace.hot has no FUSE_AFTER_SECONDS");
            again = seconds == NULL || after == NULL ? -1 : PyObject_RichCompareBool(seconds, after, Py_GE);
            Py_XDECREF(seconds);
        } else if (submitted == 1) {
            again = 0;
        }
    }
    Py_DECREF(heat);
    return again;
}

/* Whether the int `a` is the int `b`: 1, 0, or -1 on error. */
static int same_int(PyObject *a, PyObject *b) {
    long long x = PyLong_AsLongLong(a), y = x == -1 && PyErr_Occurred() ? 0 : PyLong_AsLongLong(b);
    return PyErr_Occurred() ? -1 : x == y;
}

/* The sizes a quick entry remembers having served (with their runs), before it forgets them all. */
#define QUICK_SERVED 256
/* The read of one sizes at which a quick entry caches its run under the read's key: their
   reads before run the run bound at their first, found by the walk's digest (baseline.QUICK_RUNS,
   digest_executable) as a cache hit is. A script's second and third runs each read a size once
   more, and caching its run (baseline._keep_quick: a baseline executable, the key hashed and
   admitted to its structure's family, the digest remembered) was ~13-20 us, most of such a
   read; a size read this often is in a loop that reads it many more times. */
#define QUICK_CACHED_AT 8
/* The most digests baseline.QUICK_RUNS holds before it forgets them all. */
#define QUICK_RUNS_MAX 4096
/* The most symbols a quick entry's pattern may have for C to match it (more: planned's). */
#define QUICK_SYMBOLS 64

/* Whether a quick entry serves a read now, as materialize.planned would (its `structure`,
   `heat`, and the tables of heats and fused histories): the heat still the structure's and not
   due, the structure not seen by the fused path, a baseline tier on (1; 0 where decide or
   planned is to say; -1 on error). */
static int quick_serves(PyObject *structure, PyObject *heat, PyObject *heats, PyObject *histories) {
    PyObject *current = PyDict_GetItemWithError(heats, structure); /* the heat still the structure's */
    if (current != heat) return PyErr_Occurred() ? -1 : 0;
    int seen = PyDict_Contains(histories, structure); /* fused code of it compiled or due: decide's */
    if (seen) return seen < 0 ? -1 : 0;
    PyObject *after = PyDict_GetItemWithError(reads_hot, str_fuse_after);
    if (after == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "trace.hot has no FUSE_AFTER_SECONDS");
        return -1;
    }
    int none = PyObject_Not(after); /* no baseline tier */
    if (none) return none < 0 ? -1 : 0;
    int submitted = attr_true(heat, str_submitted);
    if (submitted < 0) return -1;
    if (!submitted) { /* due (hot.Heat.due): decide submits its fused compile */
        PyObject *seconds = PyObject_GetAttr(heat, str_seconds);
        int due = seconds == NULL ? -1 : PyObject_RichCompareBool(seconds, after, Py_GE);
        Py_XDECREF(seconds);
        if (due) return due < 0 ? -1 : 0;
    }
    return 1;
}

/* The run of a read at new sizes `values` (its rows generalised) that its structure's quick
   entry in baseline.PLANNED serves, as materialize.planned would run it (baseline.quick says when):
   an object with run(buffers), a new reference; None where planned is to say; NULL on error.
   The run bound at the first read of those sizes is kept in the entry's dict of sizes served
   ([run, reads]) and, by the read's `digest` (NULL: none), in baseline.QUICK_RUNS, where
   quick_run serves their next reads of that digest; a read of them that comes here again (of
   another digest, or none: a literal of other bits; or the QUICK_CACHED_AT-th) caches the run
   under the read's `key` (the entry's baseline._keep_quick, given the walk's graph key,
   `walked`'s first item), as planned caches the executable it makes, found by the key and the
   walk's digest from the next read on. The caller holds the lock. */
static PyObject *quick_read(PyObject *entry, PyObject *values, PyObject *walked, PyObject *key, PyObject *digest) {
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 14 || !PyTuple_CheckExact(values) ||
        !PyDict_CheckExact(PyTuple_GET_ITEM(entry, 12))) {
        PyErr_SetString(PyExc_TypeError, "baseline.PLANNED's quick entry is not a 14-tuple with a dict 13th");
        return NULL;
    }
    PyObject *structure = PyTuple_GET_ITEM(entry, 0), *heat = PyTuple_GET_ITEM(entry, 1);
    PyObject *heats = PyTuple_GET_ITEM(entry, 2), *histories = PyTuple_GET_ITEM(entry, 3);
    PyObject *fixed_at = PyTuple_GET_ITEM(entry, 4), *fixed = PyTuple_GET_ITEM(entry, 5);
    PyObject *symbol_at = PyTuple_GET_ITEM(entry, 6), *symbols = PyTuple_GET_ITEM(entry, 7);
    PyObject *sized = PyTuple_GET_ITEM(entry, 8);
    Py_ssize_t n_symbols = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 9));
    Py_ssize_t n_values = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 10));
    if (PyErr_Occurred()) return NULL;
    if (!PyDict_Check(heats) || !PyDict_Check(histories) || !PyTuple_CheckExact(fixed_at) || !PyTuple_CheckExact(fixed) ||
        !PyTuple_CheckExact(symbol_at) || !PyTuple_CheckExact(symbols) || !PyTuple_CheckExact(sized) ||
        PyTuple_GET_SIZE(fixed) != PyTuple_GET_SIZE(fixed_at) || PyTuple_GET_SIZE(symbols) != PyTuple_GET_SIZE(symbol_at) ||
        PyTuple_GET_SIZE(sized) != PyTuple_GET_SIZE(symbol_at) || n_symbols < 0) {
        PyErr_SetString(PyExc_TypeError, "baseline.PLANNED's quick entry is malformed");
        return NULL;
    }
    if (PyTuple_GET_SIZE(values) != n_values || n_symbols > QUICK_SYMBOLS) Py_RETURN_NONE; /* planned's */
    int serves = quick_serves(structure, heat, heats, histories);
    if (serves <= 0) return serves < 0 ? NULL : Py_NewRef(Py_None);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(fixed_at); k++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(fixed_at, k));
        if (p < 0 || p >= n_values) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "baseline.PLANNED's position past the values");
            return NULL;
        }
        int same = same_int(PyTuple_GET_ITEM(values, p), PyTuple_GET_ITEM(fixed, k));
        if (same <= 0) return same < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *found[QUICK_SYMBOLS] = {NULL};
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(symbol_at); k++) {
        Py_ssize_t p = PyLong_AsSsize_t(PyTuple_GET_ITEM(symbol_at, k));
        Py_ssize_t symbol = PyLong_AsSsize_t(PyTuple_GET_ITEM(symbols, k));
        if (p < 0 || p >= n_values || symbol < 0 || symbol >= n_symbols) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "baseline.PLANNED's position past the values");
            return NULL;
        }
        PyObject *value = PyTuple_GET_ITEM(values, p);
        long long v = PyLong_AsLongLong(value);
        if (v == -1 && PyErr_Occurred()) return NULL;
        if (v < 2 && PyObject_IsTrue(PyTuple_GET_ITEM(sized, k))) Py_RETURN_NONE; /* 0 and 1: Pattern.match's rules */
        if (found[symbol] == NULL) {
            found[symbol] = value;
        } else {
            int same = same_int(found[symbol], value);
            if (same <= 0) return same < 0 ? NULL : Py_NewRef(Py_None);
        }
    }
    PyObject *served = PyTuple_GET_ITEM(entry, 12); /* sizes served: [their run, its reads] */
    PyObject *kept = PyDict_GetItemWithError(served, values);
    if (kept != NULL) {
        if (!PyList_CheckExact(kept) || PyList_GET_SIZE(kept) != 2 || !PyLong_CheckExact(PyList_GET_ITEM(kept, 1))) {
            PyErr_SetString(PyExc_TypeError, "baseline.PLANNED's sizes served hold a malformed run");
            return NULL;
        }
        PyObject *bound = Py_NewRef(PyList_GET_ITEM(kept, 0));
        long reads = PyLong_AsLong(PyList_GET_ITEM(kept, 1)) + 1;
        PyObject *counted = reads == -1 && PyErr_Occurred() ? NULL : PyLong_FromLong(reads);
        if (counted == NULL) {
            Py_DECREF(bound);
            return NULL;
        }
        PyList_SetItem(kept, 1, counted); /* steals it */
        /* its digest did not find it (another digest, none, or the QUICK_CACHED_AT-th read): cached */
        PyObject *cached = PyObject_CallFunctionObjArgs(PyTuple_GET_ITEM(entry, 13), structure, heat, bound, key,
                                                        PyTuple_GET_ITEM(walked, 0), values,
                                                        digest != NULL ? digest : Py_None, NULL);
        if (cached == NULL) Py_CLEAR(bound);
        Py_XDECREF(cached);
        return bound;
    }
    if (PyErr_Occurred()) return NULL;
    PyObject *list = PyList_New(n_symbols);
    if (list == NULL) return NULL;
    for (Py_ssize_t s = 0; s < n_symbols; s++) {
        if (found[s] == NULL) { /* a symbol of no position: Pattern.match's rules */
            Py_DECREF(list);
            Py_RETURN_NONE;
        }
        PyList_SET_ITEM(list, s, Py_NewRef(found[s]));
    }
    PyObject *bound = PyObject_CallOneArg(PyTuple_GET_ITEM(entry, 11), list);
    Py_DECREF(list);
    if (bound == NULL || bound == Py_None) return bound;
    PyObject *first = PyList_New(2);
    if (first == NULL) {
        Py_DECREF(bound);
        return NULL;
    }
    PyList_SET_ITEM(first, 0, Py_NewRef(bound));
    PyList_SET_ITEM(first, 1, PyLong_FromLong(1)); /* a small int: cached, never NULL */
    if (PyDict_GET_SIZE(served) >= QUICK_SERVED) PyDict_Clear(served);
    int failed = PyDict_SetItem(served, values, first);
    if (!failed && digest != NULL) { /* found by its digest from its next read on */
        PyObject *found = PyTuple_Pack(2, entry, first);
        if (found != NULL && PyDict_GET_SIZE(reads_quick_runs) >= QUICK_RUNS_MAX) PyDict_Clear(reads_quick_runs);
        failed = found == NULL || PyDict_SetItem(reads_quick_runs, digest, found);
        Py_XDECREF(found);
    }
    Py_DECREF(first);
    if (failed) Py_CLEAR(bound);
    return bound;
}

/* The executable materialize.planned makes for a walked graph that no executable serves, from
   its structure's plan (a loop's read at a new size): its rows generalised, and its structure
   (the rows without sizes, its outputs, no donation, the backend's tag: `key`'s) found among
   those planned (a new reference), run from C where its quick entry there serves it
   (quick_read, given the walk's `digest`, NULL where it has none), else None; NULL on error.
   The caller holds the lock. */
static PyObject *planned_executable(PyObject *walked, PyObject *key, PyObject *digest) {
    if (PyDict_GET_SIZE(reads_structures) == 0) Py_RETURN_NONE;
    PyObject *graph_key = PyTuple_GET_ITEM(walked, 0);
    PyObject *args[] = {reads_sized, reads_describe, PyTuple_GET_ITEM(graph_key, 0)};
    PyObject *general = generalize(NULL, args, 3); /* (structure, values, sizes) */
    if (general == NULL) return NULL;
    PyObject *plain = PyTuple_Pack(4, PyTuple_GET_ITEM(general, 0), PyTuple_GET_ITEM(graph_key, 1), reads_given,
                                   PyTuple_GET_ITEM(key, 2));
    PyObject *found = plain == NULL ? NULL : PyDict_GetItemWithError(reads_structures, plain);
    Py_XDECREF(plain);
    PyObject *made = NULL;
    if (found == NULL) {
        if (!PyErr_Occurred()) made = Py_NewRef(Py_None);
    } else {
        Py_INCREF(found); /* the table's, which another thread may empty */
        int entry = PyTuple_CheckExact(found); /* a quick entry, its structure first */
        if (entry) {
            made = quick_read(found, PyTuple_GET_ITEM(general, 1), walked, key, digest);
            if (made == Py_None) Py_CLEAR(made); /* planned's to say */
        }
        if (made == NULL && !PyErr_Occurred())
            made = PyObject_CallFunctionObjArgs(reads_planned, walked, key, entry ? PyTuple_GET_ITEM(found, 0) : found,
                                                PyTuple_GET_ITEM(general, 1), PyTuple_GET_ITEM(general, 2), NULL);
        Py_DECREF(found);
    }
    Py_DECREF(general);
    return made;
}

/* The cache tag of the backend a walked graph runs on (its outputs' first device's, else the
   registry's current one) and whether its compiler runs ops apart (host round trips, device
   calls): 1, ``*tag`` a new reference; 0 where its read is decide's (a device's graph with a
   result of no device, which finish copies to the host; no backend chosen yet); -1 on error. */
static int read_tag(PyObject *outputs, PyObject **tag, int *apart) {
    *tag = NULL;
    PyObject *device = Py_None;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outputs) && device == Py_None; i++)
        device = SLOT(PyList_GET_ITEM(outputs, i), off_device); /* the first node's of a device */
    PyObject *backend = NULL;
    if (device != NULL && device != Py_None) {
        PyObject *transfers = PyObject_GetAttr(device, str_transfers);
        if (transfers == NULL) return -1;
        Py_DECREF(transfers);
        if (transfers != reads_host)
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outputs); i++)
                if (SLOT(PyList_GET_ITEM(outputs, i), off_device) == Py_None) return 0;
        backend = PyObject_GetAttr(device, str_backend);
        if (backend == NULL) return -1;
        if (backend == Py_None) Py_CLEAR(backend);
    }
    if (backend == NULL) { /* registry.current(), once it is chosen */
        backend = PyDict_GetItemWithError(reads_registry, str_current);
        if (backend == NULL || backend == Py_None) return PyErr_Occurred() ? -1 : 0;
        Py_INCREF(backend);
    }
    PyObject *compiler = PyObject_GetAttr(backend, str_compiler);
    int ops_apart = compiler == NULL ? -1 : attr_true(compiler, str_host_ops);
    if (ops_apart == 0) ops_apart = attr_true(compiler, str_device_call_ops);
    Py_XDECREF(compiler);
    *tag = ops_apart < 0 ? NULL : PyObject_GetAttr(backend, str_cache_tag);
    Py_DECREF(backend);
    if (*tag == NULL) return -1;
    *apart = ops_apart;
    return 1;
}

/* ``found``, a cached executable (a new reference), as a read's hit: 1, ``*exe`` it, its hit
   counted; 0 where the read is decide's (its structure is due or fused code of it landed, or
   it passes a parameter through: no memory the run made), ``found`` released; -1 on error. */
static int serve(PyObject *found, PyObject **exe) {
    int again = Py_IS_TYPE(found, baseline_type) ? needs_attention(found) : 0;
    int passes = again ? again : attr_true(found, str_returns_parameters);
    if (again || passes) {
        Py_DECREF(found);
        return again < 0 || passes < 0 ? -1 : 0;
    }
    if (count_hit(found)) {
        Py_DECREF(found);
        return -1;
    }
    *exe = found;
    return 1;
}

/* The cached executable of a walked graph that runs as it is, its hit counted (1, ``*exe`` a
   new reference, ``*key`` the key it was found by, ``*cached`` set), or, where none is cached,
   the one planned_executable makes where ``planned`` (1, ``*cached`` left 0); 0 where
   materialize.decide is to say what runs; -1 on error. ``tag`` and ``apart`` are read_tag's for the walk, ``digest``
   its digest (NULL: none). The caller holds the lock and releases ``*key``.
   A device's graph (a GPU's) runs here too where it is a hit and none of its results is a
   value of no device (decide's: finish copies those to the host); its misses are decide's,
   which looks for the ops it runs apart (host round trips, device calls: a graph with one
   is never cached whole), as are those of any backend that has such ops. */
static int cached_executable(PyObject *walked, PyObject *tag, int apart, int planned, PyObject *digest,
                             PyObject **exe, PyObject **key, int *cached) {
    *exe = NULL;
    *key = PyTuple_Pack(3, PyTuple_GET_ITEM(walked, 0), reads_given, tag);
    if (*key == NULL) return -1;
    PyObject *found = PyDict_GetItemWithError(reads_entries, *key);
    if (found == NULL) {
        if (PyErr_Occurred() || apart || !planned) return PyErr_Occurred() ? -1 : 0;
        found = planned_executable(walked, *key, digest);
        if (found == NULL) return -1;
        if (found == Py_None) {
            Py_DECREF(found);
            return 0;
        }
        *exe = found; /* made now, from a plan: no hit to count, nothing due (planned checked) */
        return 1;
    }
    int status = serve(Py_NewRef(found), exe);
    *cached = status == 1;
    return status;
}

/* The run a quick entry bound at the first read of a walk's sizes (quick_read), found by the
   walk's `digest` in baseline.QUICK_RUNS ((entry, [run, reads])), where the entry still serves
   (quick_serves) and the read is not the QUICK_CACHED_AT-th of those sizes, which
   quick_read caches (the digest is forgotten then, as where the entry no longer serves): 1,
   ``*exe`` the run (a new reference), its read counted; 0 where the walk's read is the key's
   to find; -1 on error. The caller holds the lock. */
static int quick_run(PyObject *digest, PyObject **exe) {
    PyObject *found = PyDict_GetItemWithError(reads_quick_runs, digest);
    if (found == NULL) return PyErr_Occurred() ? -1 : 0;
    PyObject *entry = PyTuple_CheckExact(found) && PyTuple_GET_SIZE(found) == 2 ? PyTuple_GET_ITEM(found, 0) : NULL;
    PyObject *kept = entry != NULL ? PyTuple_GET_ITEM(found, 1) : NULL;
    if (entry == NULL || !PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 14 || !PyList_CheckExact(kept) ||
        PyList_GET_SIZE(kept) != 2 || !PyLong_CheckExact(PyList_GET_ITEM(kept, 1)) ||
        !PyDict_Check(PyTuple_GET_ITEM(entry, 2)) || !PyDict_Check(PyTuple_GET_ITEM(entry, 3))) {
        PyErr_SetString(PyExc_TypeError, "baseline.QUICK_RUNS holds a malformed run");
        return -1;
    }
    Py_INCREF(found); /* held while the checks run Python (a heat's attributes) */
    int serves = quick_serves(PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 1), PyTuple_GET_ITEM(entry, 2),
                              PyTuple_GET_ITEM(entry, 3));
    long reads = serves == 1 ? PyLong_AsLong(PyList_GET_ITEM(kept, 1)) + 1 : 0;
    int status = serves < 0 || (reads == 0 && PyErr_Occurred()) ? -1 : 0;
    if (status == 0 && serves == 1 && reads < QUICK_CACHED_AT) {
        PyObject *counted = PyLong_FromLong(reads);
        if (counted == NULL) {
            status = -1;
        } else {
            PyList_SetItem(kept, 1, counted); /* steals it */
            *exe = Py_NewRef(PyList_GET_ITEM(kept, 0));
            status = 1;
        }
    } else if (status == 0 && PyDict_DelItem(reads_quick_runs, digest)) {
        if (PyErr_ExceptionMatches(PyExc_KeyError)) PyErr_Clear(); /* forgotten meanwhile */
        else status = -1;
    }
    Py_DECREF(found);
    return status;
}

/* The executable the cache's digest table holds for a walk on the backend of ``tag``
   (``ExecutableCache.digests``: see "a walk's digest"), served as a hit, or, where ``quick``,
   the run a quick entry bound for it (quick_run) (1, ``*exe`` a new
   reference); 0 where the walk has no digest or the table none that serves, ``*digest`` the
   walk's digest where it has one (a new reference, for ``remember`` once the key finds the
   executable); -1 on error. The caller holds the lock. */
static int digest_executable(Walk *w, PyObject *tag, int quick, PyObject **digest, PyObject **exe) {
    *exe = NULL;
    *digest = digest_of(w, tag);
    if (*digest == NULL) return PyErr_Occurred() ? -1 : 0;
    PyObject *digests = PyObject_GetAttr(reads_cache, str_digests);
    if (digests == NULL) return -1;
    PyObject *found = PyDict_CheckExact(digests) ? PyDict_GetItemWithError(digests, *digest) : NULL; /* (exe, key) */
    int status;
    if (found != NULL && PyTuple_CheckExact(found) && PyTuple_GET_SIZE(found) == 2)
        status = serve(Py_NewRef(PyTuple_GET_ITEM(found, 0)), exe);
    else if (PyErr_Occurred() || !PyDict_CheckExact(digests))
        status = -1;
    else
        status = quick ? quick_run(*digest, exe) : 0;
    if (status < 0 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the executable cache's digests are not a dict of pairs");
    Py_DECREF(digests);
    return status;
}

/* materialize.decide's step for `walked` (of the pending ones of `nodes`) under the lock, then,
   without it, materialize.finish(nodes, step, None, cut, True), as materialize runs them. */
static PyObject *decided_read(PyObject *nodes, PyObject *walked, int cut) {
    PyObject *cut_flag = cut ? Py_True : Py_False;
    PyObject *step = PyObject_CallFunctionObjArgs(reads_decide, walked, Py_None, cut_flag, Py_True, NULL);
    if (lock_release(reads_lock) || step == NULL) {
        Py_XDECREF(step);
        return NULL;
    }
    PyObject *done = PyObject_CallFunctionObjArgs(reads_finish, nodes, step, Py_None, cut_flag, Py_True, NULL);
    Py_DECREF(step);
    return done;
}

/* Runs the cached `exe` on a walk's buffers, then gives the walk's nodes (its outputs) their
   results under the lock (set_buffers). The caller released the lock. */
static PyObject *cached_read(PyObject *buffers, PyObject *outputs, PyObject *exe) {
    PyObject *outs = PyObject_CallMethodOneArg(exe, str_run, buffers);
    if (outs == NULL || lock_acquire(reads_lock)) {
        Py_XDECREF(outs);
        return NULL;
    }
    PyObject *args[] = {outputs, outs};
    PyObject *done = set_buffers(NULL, args, 2);
    Py_DECREF(outs);
    if (lock_release(reads_lock)) Py_CLEAR(done);
    return done;
}

/* The walk of a read's pending `roots`, ``walked`` (None where the read is materialize's), its
   backend's tag and whether that backend runs ops apart (read_tag's: ``*tag`` NULL where the
   read is decide's), and, where the digest table serves it (and, where `quick`, the runs quick
   entries bound: quick_run), its executable (``*exe``): a walk the
   table has no digest for is made into ``walk``'s tuple, its digest in ``*digest`` where it
   has one. The caller holds the lock; NULL on error. */
static PyObject *walked_read(PyObject *roots, int quick, PyObject **tag, int *apart, PyObject **digest,
                             PyObject **exe, PyObject **buffers, PyObject **outputs) {
    *tag = *digest = *exe = *buffers = *outputs = NULL;
    long long kept = PyLong_AsLongLong(reads_kept);
    if (kept == -1 && PyErr_Occurred()) return NULL;
    Walk w;
    int status = walk_graph(roots, kept, &w);
    PyObject *walked = NULL;
    if (status == 0) {
        walked = Py_NewRef(Py_None); /* a traced placeholder: Python's walk raises */
    } else if (status == 1) {
        int served = read_tag(w.outputs, tag, apart);
        if (served == 1) served = digest_executable(&w, *tag, quick, digest, exe);
        if (served == 1) {
            *buffers = Py_NewRef(w.buffers);
            *outputs = Py_NewRef(w.outputs);
            walked = Py_NewRef(Py_None);
        } else if (served == 0) {
            walked = walked_tuple(&w);
        }
    }
    walk_free(&w);
    if (walked == NULL) {
        Py_CLEAR(*tag);
        Py_CLEAR(*digest);
        Py_CLEAR(*exe);
    }
    return walked;
}

/* Has the cache's digest table find `exe`, cached under `key` and found by it, by a walk's
   `digest` from the next read on (ExecutableCache.remember), the key untracked by the collector
   as the cache's own keys are: 0, or -1 on error. The caller released the lock. */
static int remember_digest(PyObject *digest, PyObject *key, PyObject *exe) {
    PyObject *untracked = untrack(NULL, key);
    PyObject *remembered = untracked == NULL ? NULL
                                             : PyObject_CallMethodObjArgs(reads_cache, str_remember, digest, key, exe,
                                                                          NULL);
    Py_XDECREF(untracked);
    Py_XDECREF(remembered);
    return remembered == NULL ? -1 : 0;
}

/* A read of the pending ones of `nodes` (a list), as materialize(nodes, cut=cut) makes it, the
   walk made here: the executable the cache holds for their graph found by the walk's digest or
   key (a hit counted) and run; where `planned`, a miss bound from its structure's plan
   (planned_executable); else decide and finish called with the walk. 1 where it computed
   them (or none was pending), 0 where the read is materialize's to walk (a traced placeholder;
   unless `cut`, the first read after a loop's cut graphs, whose sizes cuts hands on), -1 on
   error. A cut's hit is decide's alike: cuts.sizes_changing changes nothing for a cut. */
static int read_roots(PyObject *nodes, int cut, int planned) {
    if (lock_acquire(reads_lock)) return -1;
    if (!cut) { /* else cuts.sizes_changing has a loop's sizes to pass on: materialize's */
        PyObject *since = PyDict_GetItemWithError(reads_cuts, str_since_read);
        int cuts = since == NULL ? (PyErr_Occurred() ? -1 : 0) : PyObject_IsTrue(since);
        if (cuts) return lock_release(reads_lock) || cuts < 0 ? -1 : 0;
    }
    PyObject *roots; /* the pending nodes, each once, in order (materialize's) */
    if (PyList_GET_SIZE(nodes) == 1 && SLOT(PyList_GET_ITEM(nodes, 0), off_buffer) == Py_None) {
        roots = Py_NewRef(nodes); /* a read of one value: most reads */
    } else {
        roots = PyList_New(0);
        for (Py_ssize_t i = 0; roots != NULL && i < PyList_GET_SIZE(nodes); i++) {
            PyObject *node = PyList_GET_ITEM(nodes, i);
            int seen = SLOT(node, off_buffer) != Py_None; /* computed: maybe meanwhile, by another thread */
            for (Py_ssize_t j = 0; !seen && j < PyList_GET_SIZE(roots); j++) seen = PyList_GET_ITEM(roots, j) == node;
            if (!seen && PyList_Append(roots, node)) Py_CLEAR(roots);
        }
        if (roots == NULL) return lock_release(reads_lock), -1;
        if (!PyList_GET_SIZE(roots)) {
            Py_DECREF(roots);
            return lock_release(reads_lock) ? -1 : 1;
        }
    }
    PyObject *tag, *exe, *digest, *buffers, *outputs, *done = NULL;
    int apart = 0;
    PyObject *walked = walked_read(roots, planned, &tag, &apart, &digest, &exe, &buffers, &outputs);
    Py_DECREF(roots);
    if (walked == NULL) return lock_release(reads_lock), -1;
    if (exe != NULL) { /* served by its digest */
        done = lock_release(reads_lock) ? NULL : cached_read(buffers, outputs, exe);
        Py_DECREF(exe);
        Py_DECREF(buffers);
        Py_DECREF(outputs);
    } else if (walked != Py_None) {
        PyObject *key = NULL;
        int cached = 0;
        int hit = tag == NULL ? 0 : cached_executable(walked, tag, apart, planned, digest, &exe, &key, &cached);
        if (hit < 0) {
            lock_release(reads_lock);
        } else {
            done = hit ? (lock_release(reads_lock) ? NULL
                                                   : cached_read(PyTuple_GET_ITEM(walked, 1), PyTuple_GET_ITEM(walked, 2),
                                                                 exe))
                       : decided_read(nodes, walked, cut);
            if (done != NULL && cached && digest != NULL && remember_digest(digest, key, exe)) Py_CLEAR(done);
        }
        Py_XDECREF(key);
        Py_XDECREF(exe);
    } else { /* a traced placeholder: materialize's, whose walk raises the trace's error */
        Py_DECREF(walked);
        Py_XDECREF(tag);
        Py_XDECREF(digest);
        return lock_release(reads_lock) ? -1 : 0;
    }
    Py_DECREF(walked);
    Py_XDECREF(tag);
    Py_XDECREF(digest);
    if (done == NULL) return -1;
    Py_DECREF(done);
    return 1;
}

static PyObject *read_node(PyObject *self, PyObject *node) {
    (void)self;
    if (!is_node(node)) return NULL;
    if (reads_lock == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure_reads was not called");
        return NULL;
    }
    if (SLOT(node, off_buffer) != Py_None) Py_RETURN_NONE;
    PyObject *nodes = PyList_New(1);
    if (nodes == NULL) return NULL;
    PyList_SET_ITEM(nodes, 0, Py_NewRef(node));
    int status = read_roots(nodes, 0, 1);
    PyObject *done = status < 0 ? NULL : status ? Py_NewRef(Py_None) : PyObject_CallOneArg(reads_materialize, nodes);
    Py_DECREF(nodes);
    return done;
}

/* _graph.read_several(nodes, cut): materialize(nodes, cut=cut) for its callers of several
   nodes (a graph cut at the pending bound with the values waiting on it, graph.wrap, `cut`;
   each wide operand of a concatenation), as read_roots makes it but for a plan's binding (a
   cut's miss is decide's, which passes on the loop's sizes): True where it computed them,
   False where the read is materialize's. A loop's cuts were ~75 us each in decide and finish
   where their graph was cached. */
static PyObject *read_several(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "read_several(nodes, cut) takes a list of nodes and a bool");
        return NULL;
    }
    int cut = PyObject_IsTrue(args[1]);
    if (cut < 0) return NULL;
    if (reads_lock == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure_reads was not called");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(args[0]); i++)
        if (!is_node(PyList_GET_ITEM(args[0], i))) return NULL;
    int status = read_roots(args[0], cut, 0);
    return status < 0 ? NULL : Py_NewRef(status ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(Node, Shape, attr_key, serials, traced, leaf_dtypes): read the slots."},
    {"derive", (PyCFunction)(void (*)(void))derive, METH_FASTCALL, "derive(op, operands, attrs, shape) -> Node."},
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL, "walk(roots, kept_bytes) -> (key, buffers, outputs, order) or None."},
    {"untrack", untrack, METH_O, "untrack(key) -> whether the key is untracked by the garbage collector, its parts that can be are."},
    {"set_buffers", (PyCFunction)(void (*)(void))set_buffers, METH_FASTCALL,
     "set_buffers(nodes, buffers): make the pending ones ready."},
    {"ready", (PyCFunction)(void (*)(void))ready, METH_FASTCALL, "ready(buffer, shape, device) -> a ready Node."},
    {"pending", pending, METH_O, "pending(node) -> the pending nodes of its graph, in creation order."},
    {"recount_depths", recount_depths, METH_O,
     "recount_depths(node): each pending node of its graph given 1 + its operands' largest depth."},
    {"replay", (PyCFunction)(void (*)(void))replay, METH_FASTCALL, "replay(steps, nodes): append a recipe's nodes."},
    {"made_steps", (PyCFunction)(void (*)(void))made_steps, METH_FASTCALL,
     "made_steps(results, nodes, first) -> (shared, steps, result numbers) or None."},
    {"signature", (PyCFunction)(void (*)(void))signature, METH_FASTCALL,
     "signature(args, kwargs, arrays, nodes) -> a recipe's key, or None."},
    {"configure_signature", configure_signature, METH_VARARGS, "configure_signature(tags, Array, ViewOf, dtype, max_nesting)."},
    {"generalize", (PyCFunction)(void (*)(void))generalize, METH_FASTCALL,
     "generalize(sized, describe, rows) -> (structure, values, sizes)."},
    {"configure_scalar_reads", configure_scalar_reads, METH_VARARGS,
     "configure_scalar_reads(__float__, __int__, __bool__, __index__): Array's Python methods, the definitions."},
    {"use_window", use_window, METH_O, "use_window(window): the Window x[key] of an Array asks first (None: none)."},
    {"configure_elements", configure_elements, METH_VARARGS,
     "configure_elements(Array, _getitem, _setitem, HOST, numpy.array, numpy.ndarray, EXACT_SCALARS, "
     "scalars.evaluate, value_read, _STORES, views.Family): element reads and stores in C."},
    {"configure_windows", configure_windows, METH_VARARGS,
     "configure_windows(flags_offset, writeable_flag): where an ndarray keeps its flags (transfer.FLAGS_OFFSET), "
     "for windows of read-only buffers made views in C (derive)."},
    {"attach_view", (PyCFunction)(void (*)(void))attach_view, METH_FASTCALL,
     "attach_view(base, result, step, placed) -> whether result was made a view of base here (views.attach)."},
    {"count_read", count_read, METH_NOARGS, "count_read(): a value read by this thread (node.value_read)."},
    {"reads_mark", reads_mark, METH_NOARGS, "reads_mark() -> the values this thread read so far (node.reads_mark)."},
    {"configure_reads", configure_reads, METH_VARARGS,
     "configure_reads(GRAPH_LOCK, EXECUTABLES.entries, EXECUTABLES, hot_globals, no_donation, registry_globals, cuts_globals, BaselineExecutable, HOST, "
     "decide, finish, materialize, kept_bytes, planned, planned_structures, quick_runs, sized, describe)."},
    {"read", read_node, METH_O, "read(node): materialize([node]), its cached executable's run found in C."},
    {"read_several", (PyCFunction)(void (*)(void))read_several, METH_FASTCALL,
     "read_several(nodes, cut) -> whether it computed them (materialize(nodes, cut=cut)); False: materialize's."},
    {"configure_elementwise", configure_elementwise, METH_VARARGS,
     "configure_elementwise(Array, reused_scalars, scalar_operand, wrap, node_globals, tracing_globals, made_in_c, "
     "make_array, reused_scalars_max)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graph", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__graph(void) {
    str_parameter = PyUnicode_InternFromString("parameter");
    str_slice_sizes = PyUnicode_InternFromString("slice_sizes");
    str_itemsize = PyUnicode_InternFromString("itemsize");
    str_transfers = PyUnicode_InternFromString("transfers");
    str_item = PyUnicode_InternFromString("item");
    str_computed = PyUnicode_InternFromString("_computed");
    str_acquire = PyUnicode_InternFromString("acquire");
    str_pin = PyUnicode_InternFromString("pin");
    str_views = PyUnicode_InternFromString("views");
    str_first_transposed = PyUnicode_InternFromString("a.T @ b");
    str_second_transposed = PyUnicode_InternFromString("a @ b.T");
    str_family = PyUnicode_InternFromString("family");
    str_layout = PyUnicode_InternFromString("layout");
    str_bounds = PyUnicode_InternFromString("bounds");
    str_release = PyUnicode_InternFromString("release");
    empty_tuple = PyTuple_New(0);
    zero = PyLong_FromLong(0);
    str_max_pending = PyUnicode_InternFromString("MAX_PENDING");
    str_active = PyUnicode_InternFromString("_ACTIVE");
    str_hex = PyUnicode_InternFromString("hex");
    str_axis = PyUnicode_InternFromString("axis");
    str_keepdims = PyUnicode_InternFromString("keepdims");
    str_reduce = PyUnicode_InternFromString("reduce");
    str_convert = PyUnicode_InternFromString("convert");
    str_reshape = PyUnicode_InternFromString("reshape");
    str_divide = PyUnicode_InternFromString("divide");
    str_dimensions = PyUnicode_InternFromString("dimensions");
    str_kind = PyUnicode_InternFromString("kind");
    str_dims = PyUnicode_InternFromString("dims");
    str_dynamic_slice = PyUnicode_InternFromString("dynamic_slice");
    str_correction = PyUnicode_InternFromString("correction");
    str_dot_general = PyUnicode_InternFromString("dot_general");
    str_transpose = PyUnicode_InternFromString("transpose");
    str_add = PyUnicode_InternFromString("add");
    str_mean = PyUnicode_InternFromString("mean");
    str_subtract = PyUnicode_InternFromString("subtract");
    str_multiply = PyUnicode_InternFromString("multiply");
    str_sqrt = PyUnicode_InternFromString("sqrt");
    str_broadcast_in_dim = PyUnicode_InternFromString("broadcast_in_dim");
    str_broadcast_dimensions = PyUnicode_InternFromString("broadcast_dimensions");
    str_current = PyUnicode_InternFromString("_current");
    str_since_read = PyUnicode_InternFromString("_since_read");
    str_backend = PyUnicode_InternFromString("backend");
    str_cache_tag = PyUnicode_InternFromString("cache_tag");
    str_compiler = PyUnicode_InternFromString("compiler");
    str_host_ops = PyUnicode_InternFromString("host_ops");
    str_device_call_ops = PyUnicode_InternFromString("device_call_ops");
    str_heat = PyUnicode_InternFromString("heat");
    str_writable = PyUnicode_InternFromString("writable");
    str_generation = PyUnicode_InternFromString("generation");
    str_submitted = PyUnicode_InternFromString("submitted");
    str_seconds = PyUnicode_InternFromString("seconds");
    str_fuse_after = PyUnicode_InternFromString("FUSE_AFTER_SECONDS");
    str_used = PyUnicode_InternFromString("_used");
    str_hit_counts = PyUnicode_InternFromString("_hit_counts");
    str_hits = PyUnicode_InternFromString("_hits");
    str_digests = PyUnicode_InternFromString("digests");
    str_remember = PyUnicode_InternFromString("remember");
    str_returns_parameters = PyUnicode_InternFromString("returns_parameters");
    str_run = PyUnicode_InternFromString("run");
    str_concatenate = PyUnicode_InternFromString("concatenate");
    str_recent = PyUnicode_InternFromString("_recent");
    str_last = PyUnicode_InternFromString("_last");
    str_root = PyUnicode_InternFromString("root");
    NOT_HANDLED_MARK = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type); /* an object() of its own */
    if (str_parameter == NULL || str_slice_sizes == NULL || str_itemsize == NULL || str_transfers == NULL ||
        str_item == NULL || str_computed == NULL ||
        str_acquire == NULL || str_release == NULL || str_pin == NULL || str_views == NULL ||
        str_family == NULL || str_layout == NULL || str_bounds == NULL ||
        str_first_transposed == NULL || str_second_transposed == NULL ||
        empty_tuple == NULL || zero == NULL ||
        str_max_pending == NULL || str_active == NULL || str_hex == NULL ||
        str_axis == NULL || str_keepdims == NULL || str_reduce == NULL || str_convert == NULL || str_reshape == NULL ||
        str_divide == NULL || str_dimensions == NULL || str_kind == NULL || str_dims == NULL ||
        str_dynamic_slice == NULL || str_correction == NULL || str_dot_general == NULL || str_transpose == NULL ||
        str_add == NULL || str_mean == NULL ||
        str_subtract == NULL || str_multiply == NULL || str_sqrt == NULL || str_broadcast_in_dim == NULL ||
        str_broadcast_dimensions == NULL || str_current == NULL || str_since_read == NULL || str_backend == NULL ||
        str_cache_tag == NULL || str_compiler == NULL || str_host_ops == NULL || str_device_call_ops == NULL ||
        str_heat == NULL || str_writable == NULL || str_generation == NULL || str_submitted == NULL || str_seconds == NULL ||
        str_fuse_after == NULL || str_used == NULL || str_hit_counts == NULL || str_hits == NULL ||
        str_digests == NULL || str_remember == NULL ||
        str_returns_parameters == NULL || str_run == NULL || str_concatenate == NULL || str_recent == NULL ||
        str_last == NULL || str_root == NULL ||
        NOT_HANDLED_MARK == NULL || PyType_Ready(&handle_type) || PyType_Ready(&elementwise_type) ||
        PyType_Ready(&reduction_type) || PyType_Ready(&window_type) ||
        PyType_Ready(&product_type) || PyType_Ready(&join_type))
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && (PyModule_AddObjectRef(m, "ArrayHandle", (PyObject *)&handle_type) ||
                      PyModule_AddObjectRef(m, "Elementwise", (PyObject *)&elementwise_type) ||
                      PyModule_AddObjectRef(m, "Reduction", (PyObject *)&reduction_type) ||
                      PyModule_AddObjectRef(m, "Window", (PyObject *)&window_type) ||
                      PyModule_AddObjectRef(m, "Product", (PyObject *)&product_type) ||
                      PyModule_AddObjectRef(m, "Join", (PyObject *)&join_type) ||
                      PyModule_AddIntConstant(m, "QUICK_CACHED_AT", QUICK_CACHED_AT)))
        Py_CLEAR(m);
    return m;
}
