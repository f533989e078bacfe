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

   configure(Node, Shape, attr_key, serials, traced) reads the offsets, once.
   derive(op, operands, attrs, shape) -> Node          (node._derive_in_python)
   walk(roots, kept_bytes) -> (key, buffers, outputs, order), or None where the Python
   walk must decide (a traced placeholder reached: it raises the trace's error).
   set_buffers(nodes, buffers)                         (node._set_buffers_in_python)
   ArrayHandle, the base of Array                       (array._ArrayHandleInPython) */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <structmember.h>

static Py_ssize_t off_op, off_operands, off_attrs, off_shape, off_buffer, off_arrays, off_depth, off_owned,
    off_weak, off_serial, off_reused, off_device, off_dims, off_dtype;
static PyTypeObject *node_type, *shape_type;
static PyObject *attr_key_fn; /* hlo.ir.attr_key */
static PyObject *serials;     /* node._SERIALS, an itertools.count */
static long long traced_depth; /* node.TRACED */
static PyObject *str_parameter, *str_itemsize, *empty_tuple, *zero;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static int slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString((PyObject *)type, name);
    if (descr == NULL) return -1;
    int ok = Py_IS_TYPE(descr, &PyMemberDescr_Type) &&
             ((PyMemberDescrObject *)descr)->d_member->type == T_OBJECT_EX;
    if (ok) *offset = ((PyMemberDescrObject *)descr)->d_member->offset;
    else PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
    Py_DECREF(descr);
    return ok ? 0 : -1;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *node, *shape, *attr_key, *counter;
    long long traced;
    if (!PyArg_ParseTuple(args, "O!O!OOL", &PyType_Type, &node, &PyType_Type, &shape, &attr_key, &counter, &traced))
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
    traced_depth = traced;
    Py_RETURN_NONE;
}

static int check_configured(void) {
    if (node_type != NULL) return 0;
    PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._graph.configure was not called");
    return -1;
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
    PyObject *device = Py_None; /* the operands' device: each is None (any) or the same */
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(operands); i++) {
        PyObject *o = PyTuple_GET_ITEM(operands, i);
        if (!is_node(o)) return NULL;
        PyObject *d = slot(o, off_depth, "depth"), *on = slot(o, off_device, "device");
        if (d == NULL || on == NULL) return NULL;
        if (on != Py_None && on != device) {
            if (device != Py_None) {
                PyErr_Format(PyExc_ValueError, "%S: arrays on different devices, %S and %S; move one with to_device",
                             args[0], device, on);
                return NULL;
            }
            device = on;
        }
        long long value = PyLong_AsLongLong(d);
        if (value == -1 && PyErr_Occurred()) return NULL;
        if (value == traced_depth) traced = 1;
        else if (value > depth) depth = value;
    }
    if (traced) depth = traced_depth - 1; /* + 1 below */
    PyObject *depth_obj = PyLong_FromLongLong(depth + 1);
    PyObject *serial = depth_obj == NULL ? NULL : PyIter_Next(serials);
    PyObject *node = serial == NULL ? NULL : node_type->tp_alloc(node_type, 0);
    if (node == NULL) {
        if (serial == NULL && depth_obj != NULL && !PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "the node counter is exhausted");
        Py_XDECREF(depth_obj);
        Py_XDECREF(serial);
        return NULL;
    }
    SLOT(node, off_op) = Py_NewRef(args[0]);
    SLOT(node, off_operands) = Py_NewRef(operands);
    SLOT(node, off_attrs) = Py_NewRef(args[2]);
    SLOT(node, off_shape) = Py_NewRef(shape);
    SLOT(node, off_buffer) = Py_NewRef(Py_None);
    SLOT(node, off_arrays) = Py_NewRef(zero);
    SLOT(node, off_depth) = depth_obj;
    SLOT(node, off_owned) = Py_NewRef(Py_False);
    SLOT(node, off_weak) = Py_NewRef(Py_False);
    SLOT(node, off_serial) = serial;
    SLOT(node, off_reused) = Py_NewRef(Py_None);
    SLOT(node, off_device) = Py_NewRef(device);
    return node;
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

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
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

typedef struct {
    PyObject *rows, *buffers, *order;
    char *reads; /* per row: whether its value depends on a buffer */
    Py_ssize_t reads_capacity;
    Map index;
} Walk;

static int reserve_reads(Walk *w, Py_ssize_t needed) {
    if (needed <= w->reads_capacity) return 0;
    Py_ssize_t capacity = 2 * needed;
    char *grown = PyMem_Realloc(w->reads, capacity);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    w->reads = grown;
    w->reads_capacity = capacity;
    return 0;
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
    Py_ssize_t n_rows = PyList_GET_SIZE(w->rows);
    PyObject *head = slot(o, off_reused, "reused");
    if (head == NULL || reserve_reads(w, n_rows + 2)) return -1;
    *depends = 1;
    if (head == Py_None) {
        if (map_set(&w->index, o, n_rows) || append_new(w->rows, dims_dtype(shape_of(o))) ||
            PyList_Append(w->buffers, SLOT(o, off_buffer)) || PyList_Append(w->order, o))
            return -1;
        w->reads[n_rows] = 1;
        return n_rows;
    }
    PyObject *inner = slot(o, off_operands, "operands");
    if (inner == NULL) return -1;
    if (PyTuple_GET_SIZE(inner) != 1 || !is_node(PyTuple_GET_ITEM(inner, 0))) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a reused node has one operand");
        return -1;
    }
    PyObject *scalar = PyTuple_GET_ITEM(inner, 0);
    if (append_new(w->rows, dims_dtype(shape_of(scalar))) ||
        append_new(w->rows, reused_row(head, n_rows)) || PyList_Append(w->buffers, SLOT(scalar, off_buffer)) ||
        PyList_Append(w->order, scalar) || PyList_Append(w->order, o))
        return -1;
    w->reads[n_rows] = w->reads[n_rows + 1] = 1;
    return n_rows + 1;
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
    Py_ssize_t n_rows = PyList_GET_SIZE(w->rows);
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

static PyObject *walk(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (list_and_one_more(args, nargs, "walk(roots: list, kept_bytes: int)")) return NULL;
    PyObject *roots = args[0];
    long long kept = PyLong_AsLongLong(args[1]);
    if (kept == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n_roots = PyList_GET_SIZE(roots), n_pending = 0;
    PyObject *result = NULL, *outputs = NULL;
    Walk w = {PyList_New(0), PyList_New(0), PyList_New(0), NULL, 0, {NULL, NULL, 0, 0}};
    Numbered *pending = NULL;
    if (w.rows == NULL || w.buffers == NULL || w.order == NULL || map_init(&w.index, MAP_START) ||
        (pending = pending_nodes(roots, &n_pending)) == NULL || (outputs = PyList_GetSlice(roots, 0, n_roots)) == NULL)
        goto done;
    PyObject *root = n_roots == 1 ? PyList_GET_ITEM(roots, 0) : NULL; /* a read of one value, live itself */
    for (Py_ssize_t k = 0; k < n_pending; k++) {
        PyObject *node = pending[k].node;
        PyObject *operands = slot(node, off_operands, "operands");
        if (operands == NULL) goto done;
        Py_ssize_t n_operands = PyTuple_GET_SIZE(operands);
        PyObject *at = PyTuple_New(n_operands);
        if (at == NULL) goto done;
        int depends = 0;
        for (Py_ssize_t j = 0; j < n_operands; j++) {
            Py_ssize_t i = operand_row(&w, PyTuple_GET_ITEM(operands, j), &depends);
            PyObject *number = i < 0 ? NULL : PyLong_FromSsize_t(i);
            if (number == NULL) {
                Py_DECREF(at);
                goto done;
            }
            PyTuple_SET_ITEM(at, j, number);
        }
        PyObject *op = slot(node, off_op, "op"), *depth = slot(node, off_depth, "depth");
        PyObject *shape = shape_of(node), *attrs = slot(node, off_attrs, "attrs");
        if (op == NULL || depth == NULL || shape == NULL || attrs == NULL) {
            Py_DECREF(at);
            goto done;
        }
        if (PyLong_AsLongLong(depth) < 0 && PyUnicode_Check(op) && PyUnicode_Compare(op, str_parameter) == 0) {
            Py_DECREF(at); /* a traced placeholder: the Python walk raises the trace's error */
            result = Py_NewRef(Py_None);
            goto done;
        }
        int has_attrs = PyObject_IsTrue(attrs);
        PyObject *key = has_attrs > 0 ? attrs_key(attrs)
                                      : has_attrs == 0 ? Py_NewRef(empty_tuple) : NULL;
        PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
        PyObject *row = key == NULL || dims == NULL || dtype == NULL ? NULL : PyTuple_Pack(5, op, key, at, dims, dtype);
        Py_XDECREF(key);
        Py_DECREF(at);
        Py_ssize_t n_rows = PyList_GET_SIZE(w.rows);
        if (reserve_reads(&w, n_rows + 1) || map_set(&w.index, node, n_rows)) {
            Py_XDECREF(row);
            goto done;
        }
        if (append_new(w.rows, row) || PyList_Append(w.order, node)) goto done;
        w.reads[n_rows] = (char)depends;
        PyObject *arrays = slot(node, off_arrays, "arrays");
        int live = arrays == NULL ? -1 : PyObject_IsTrue(arrays);
        if (live < 0) goto done;
        if (live && node != root) {
            int keep = depends ? 1 : small_enough(shape, kept);
            if (keep < 0 || (keep && PyList_Append(outputs, node))) goto done;
        }
    }
    if (shared_outputs(&w, pending, n_pending, outputs, root, kept)) goto done;
    if (PyList_GET_SIZE(outputs) > n_roots) {
        PyObject *once = unique(outputs);
        if (once == NULL) goto done;
        Py_SETREF(outputs, once);
    }
    PyObject *numbers = PyTuple_New(PyList_GET_SIZE(outputs));
    if (numbers == NULL) goto done;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outputs); i++) {
        PyObject *number = PyLong_FromSsize_t(map_get(&w.index, PyList_GET_ITEM(outputs, i)));
        if (number == NULL) {
            Py_DECREF(numbers);
            goto done;
        }
        PyTuple_SET_ITEM(numbers, i, number);
    }
    PyObject *rows = PyList_AsTuple(w.rows);
    PyObject *key = rows == NULL ? NULL : PyTuple_Pack(2, rows, numbers);
    Py_XDECREF(rows);
    Py_DECREF(numbers);
    if (key != NULL) {
        result = PyTuple_Pack(4, key, w.buffers, outputs, w.order);
        Py_DECREF(key);
    }
done:
    PyMem_Free(pending);
    PyMem_Free(w.reads);
    map_free(&w.index);
    Py_XDECREF(w.rows);
    Py_XDECREF(w.buffers);
    Py_XDECREF(w.order);
    Py_XDECREF(outputs);
    return result;
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
};

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(Node, Shape, attr_key, serials, traced): read the slots."},
    {"derive", (PyCFunction)(void (*)(void))derive, METH_FASTCALL, "derive(op, operands, attrs, shape) -> Node."},
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL, "walk(roots, kept_bytes) -> (key, buffers, outputs, order) or None."},
    {"set_buffers", (PyCFunction)(void (*)(void))set_buffers, METH_FASTCALL,
     "set_buffers(nodes, buffers): make the pending ones ready."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graph", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__graph(void) {
    str_parameter = PyUnicode_InternFromString("parameter");
    str_itemsize = PyUnicode_InternFromString("itemsize");
    empty_tuple = PyTuple_New(0);
    zero = PyLong_FromLong(0);
    if (str_parameter == NULL || str_itemsize == NULL || empty_tuple == NULL || zero == NULL ||
        PyType_Ready(&handle_type))
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddObjectRef(m, "ArrayHandle", (PyObject *)&handle_type)) Py_CLEAR(m);
    return m;
}
