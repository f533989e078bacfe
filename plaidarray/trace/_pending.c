/* The pending-graph walk of a read (to_hlo.PendingGraph), in C.

   Reading a small value is a Python loop over nodes: find the pending ones, number them,
   build the structural key the executable cache is looked up by. For a few ops that walk
   is a third of a cached read, and every eager loop pays it at each float() or asarray.
   This module does the same walk with the same result, reading the nodes' slots at the
   offsets their member descriptors give (as Cython's extension types do), so it does not
   go through attribute lookups. to_hlo.py keeps the walk in Python too: it is the
   definition, used when this module is not built, and the test of this one
   (tests/test_pending_walk.py compares both on random graphs).

   walk(roots, kept_bytes) -> (key, buffers, outputs, order, index), or None where the
   Python walk must decide (a placeholder reached: it raises the trace's error). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

/* Offsets of Node's and Shape's slots, read off their member descriptors by configure(). */
static Py_ssize_t off_op, off_operands, off_attrs, off_shape, off_buffer, off_arrays, off_depth,
    off_serial, off_shared, off_dims, off_dtype;
static PyObject *attr_key_fn;   /* hlo.ir.attr_key */
static PyObject *str_parameter; /* "parameter" */
static PyObject *str_itemsize;
static PyObject *empty_tuple;
static int configured;

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

static int slot_offset(PyObject *type, const char *name, Py_ssize_t *offset) {
    PyObject *descr = PyObject_GetAttrString(type, name);
    if (descr == NULL) return -1;
    if (!Py_IS_TYPE(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s is not a slot", name);
        Py_DECREF(descr);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX && member->type != T_OBJECT) {
        PyErr_Format(PyExc_TypeError, "%s is not an object slot", name);
        Py_DECREF(descr);
        return -1;
    }
    *offset = member->offset;
    Py_DECREF(descr);
    return 0;
}

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *node_type, *shape_type, *attr_key;
    if (!PyArg_ParseTuple(args, "OOO", &node_type, &shape_type, &attr_key)) return NULL;
    if (slot_offset(node_type, "op", &off_op) || slot_offset(node_type, "operands", &off_operands) ||
        slot_offset(node_type, "attrs", &off_attrs) || slot_offset(node_type, "shape", &off_shape) ||
        slot_offset(node_type, "buffer", &off_buffer) || slot_offset(node_type, "arrays", &off_arrays) ||
        slot_offset(node_type, "depth", &off_depth) || slot_offset(node_type, "serial", &off_serial) ||
        slot_offset(node_type, "shared", &off_shared) || slot_offset(shape_type, "dims", &off_dims) ||
        slot_offset(shape_type, "dtype", &off_dtype))
        return NULL;
    Py_XSETREF(attr_key_fn, Py_NewRef(attr_key));
    configured = 1;
    Py_RETURN_NONE;
}

/* A growable array of borrowed node pointers (the nodes stay alive: the graph holds them,
   and the caller holds GRAPH_LOCK, so no other thread changes it). */
typedef struct {
    PyObject **items;
    Py_ssize_t size, capacity;
} Stack;

static int push(Stack *s, PyObject *item) {
    if (s->size == s->capacity) {
        Py_ssize_t capacity = s->capacity ? 2 * s->capacity : 64;
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

/* A slot's value, or NULL with AttributeError when it was never set. */
static PyObject *slot(PyObject *obj, Py_ssize_t offset, const char *name) {
    PyObject *value = SLOT(obj, offset);
    if (value == NULL) PyErr_Format(PyExc_AttributeError, "node slot %s is not set", name);
    return value;
}

/* (dims, dtype) of a shape: a parameter's row. */
static PyObject *dims_dtype(PyObject *shape) {
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    if (dims == NULL || dtype == NULL) return NULL;
    return PyTuple_Pack(2, dims, dtype);
}

/* Whether a value of ``shape`` has at most ``kept`` bytes (-1 on error). */
static int small_enough(PyObject *shape, long long kept) {
    PyObject *dims = slot(shape, off_dims, "dims"), *dtype = slot(shape, off_dtype, "dtype");
    if (dims == NULL || dtype == NULL) return -1;
    PyObject *itemsize_obj = PyObject_GetAttr(dtype, str_itemsize);
    if (itemsize_obj == NULL) return -1;
    long long bytes = PyLong_AsLongLong(itemsize_obj);
    Py_DECREF(itemsize_obj);
    if (bytes == -1 && PyErr_Occurred()) return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++) {
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(dims, i));
        if (n == -1 && PyErr_Occurred()) return -1;
        if (n == 0) return 1;
        if (bytes > kept) continue; /* too large already; a zero may follow */
        bytes = n > kept ? kept + 1 : bytes * n;
    }
    return bytes <= kept;
}

static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return -1;
    int status = PyList_Append(list, item);
    Py_DECREF(item);
    return status;
}

static PyObject *walk(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *roots;
    long long kept;
    if (!PyArg_ParseTuple(args, "O!L", &PyList_Type, &roots, &kept)) return NULL;
    if (!configured) {
        PyErr_SetString(PyExc_RuntimeError, "_pending.configure was not called");
        return NULL;
    }
    Stack stack = {0};
    Numbered *pending = NULL;
    char *reads = NULL;
    PyObject *seen = NULL, *index = NULL, *order = NULL, *rows = NULL, *buffers = NULL, *outputs = NULL;
    PyObject *result = NULL;
    Py_ssize_t n_roots = PyList_GET_SIZE(roots);

    /* The pending nodes, found without regard to order. */
    seen = PySet_New(roots);
    if (seen == NULL) goto done;
    for (Py_ssize_t i = 0; i < n_roots; i++)
        if (push(&stack, PyList_GET_ITEM(roots, i))) goto done;
    if (n_roots > 1) { /* roots repeated: each once */
        stack.size = 0;
        PyObject *iter = PyObject_GetIter(seen), *item;
        if (iter == NULL) goto done;
        while ((item = PyIter_Next(iter)) != NULL) {
            int status = push(&stack, item);
            Py_DECREF(item); /* the set holds it */
            if (status) break;
        }
        Py_DECREF(iter);
        if (PyErr_Occurred()) goto done;
    }
    Py_ssize_t n_seen = stack.size;
    pending = PyMem_Malloc((n_seen > 0 ? n_seen : 1) * sizeof(Numbered));
    if (pending == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n_pending = 0;
    for (Py_ssize_t i = 0; i < n_seen; i++) pending[n_pending++].node = stack.items[i];
    while (stack.size) {
        PyObject *node = stack.items[--stack.size];
        PyObject *operands = slot(node, off_operands, "operands");
        if (operands == NULL) goto done;
        for (Py_ssize_t j = 0; j < PyTuple_GET_SIZE(operands); j++) {
            PyObject *o = PyTuple_GET_ITEM(operands, j);
            if (SLOT(o, off_buffer) != Py_None || SLOT(o, off_shared) != Py_None) continue;
            int found = PySet_Contains(seen, o);
            if (found < 0) goto done;
            if (found) continue;
            if (PySet_Add(seen, o) || push(&stack, o)) goto done;
            Numbered *grown = PyMem_Realloc(pending, (n_pending + 1) * sizeof(Numbered));
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            pending = grown;
            pending[n_pending++].node = o;
        }
    }
    /* Numbered in creation order, which is topological. */
    for (Py_ssize_t i = 0; i < n_pending; i++) {
        PyObject *serial = slot(pending[i].node, off_serial, "serial");
        if (serial == NULL) goto done;
        pending[i].serial = PyLong_AsLongLong(serial);
        if (pending[i].serial == -1 && PyErr_Occurred()) goto done;
    }
    if (n_pending > 1) qsort(pending, n_pending, sizeof(Numbered), by_serial);

    index = PyDict_New();
    order = PyList_New(0);
    rows = PyList_New(0);
    buffers = PyList_New(0);
    outputs = PyList_GetSlice(roots, 0, n_roots);
    /* per row: whether its value depends on a buffer; a node adds at most 1 + 2 per operand */
    Py_ssize_t reads_capacity = 16;
    reads = PyMem_Malloc(reads_capacity);
    if (index == NULL || order == NULL || rows == NULL || buffers == NULL || outputs == NULL || reads == NULL) {
        if (reads == NULL) PyErr_NoMemory();
        goto done;
    }
    PyObject *root = n_roots == 1 ? PyList_GET_ITEM(roots, 0) : NULL;
    for (Py_ssize_t k = 0; k < n_pending; k++) {
        PyObject *node = pending[k].node;
        PyObject *operands = slot(node, off_operands, "operands");
        if (operands == NULL) goto done;
        Py_ssize_t n_operands = PyTuple_GET_SIZE(operands);
        if (PyList_GET_SIZE(rows) + 2 * n_operands + 1 > reads_capacity) {
            reads_capacity = 2 * (PyList_GET_SIZE(rows) + 2 * n_operands + 1);
            char *grown = PyMem_Realloc(reads, reads_capacity);
            if (grown == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            reads = grown;
        }
        PyObject *at = PyTuple_New(n_operands);
        if (at == NULL) goto done;
        int depends = 0;
        for (Py_ssize_t j = 0; j < n_operands; j++) {
            PyObject *o = PyTuple_GET_ITEM(operands, j);
            PyObject *found = PyDict_GetItemWithError(index, o);
            Py_ssize_t i;
            if (found != NULL) {
                i = PyLong_AsSsize_t(found);
                if (reads[i]) depends = 1;
            } else if (PyErr_Occurred()) {
                Py_DECREF(at);
                goto done;
            } else {
                PyObject *head = SLOT(o, off_shared);
                Py_ssize_t n_rows = PyList_GET_SIZE(rows);
                int failed;
                if (head == NULL || head == Py_None) { /* a ready node, first used here: a parameter */
                    PyObject *shape = slot(o, off_shape, "shape");
                    PyObject *number = PyLong_FromSsize_t(n_rows);
                    i = n_rows;
                    failed = shape == NULL || number == NULL || PyDict_SetItem(index, o, number) ||
                             append_new(rows, dims_dtype(shape)) || PyList_Append(buffers, SLOT(o, off_buffer)) ||
                             PyList_Append(order, o);
                    Py_XDECREF(number);
                    reads[n_rows] = 1;
                } else { /* a shared scalar: its parameter and broadcast, again at each use */
                    PyObject *inner = slot(o, off_operands, "operands");
                    if (inner == NULL || !PyTuple_Check(head) || PyTuple_GET_SIZE(head) != 4 ||
                        PyTuple_GET_SIZE(inner) != 1) {
                        Py_DECREF(at);
                        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "malformed shared node");
                        goto done;
                    }
                    PyObject *scalar = PyTuple_GET_ITEM(inner, 0);
                    i = n_rows + 1;
                    failed = append_new(rows, dims_dtype(SLOT(scalar, off_shape)));
                    if (!failed) {
                        PyObject *source = Py_BuildValue("(n)", n_rows);
                        failed = source == NULL ||
                                 append_new(rows, PyTuple_Pack(5, PyTuple_GET_ITEM(head, 0), PyTuple_GET_ITEM(head, 1),
                                                               source, PyTuple_GET_ITEM(head, 2),
                                                               PyTuple_GET_ITEM(head, 3)));
                        Py_XDECREF(source);
                    }
                    failed = failed || PyList_Append(buffers, SLOT(scalar, off_buffer)) ||
                             PyList_Append(order, scalar) || PyList_Append(order, o);
                    reads[n_rows] = reads[n_rows + 1] = 1;
                }
                if (failed) {
                    Py_DECREF(at);
                    goto done;
                }
                depends = 1;
            }
            PyObject *number = PyLong_FromSsize_t(i);
            if (number == NULL) {
                Py_DECREF(at);
                goto done;
            }
            PyTuple_SET_ITEM(at, j, number);
        }
        PyObject *depth = slot(node, off_depth, "depth"), *op = slot(node, off_op, "op");
        if (depth == NULL || op == NULL) {
            Py_DECREF(at);
            goto done;
        }
        long long d = PyLong_AsLongLong(depth);
        if (d < 0 && PyUnicode_Check(op) && PyUnicode_Compare(op, str_parameter) == 0) {
            Py_DECREF(at); /* a placeholder: the Python walk raises the trace's error */
            Py_INCREF(Py_None);
            result = Py_None;
            goto done;
        }
        PyObject *shape = slot(node, off_shape, "shape"), *attrs = slot(node, off_attrs, "attrs");
        if (shape == NULL || attrs == NULL) {
            Py_DECREF(at);
            goto done;
        }
        int has_attrs = PyObject_IsTrue(attrs);
        PyObject *attr_key = has_attrs > 0 ? PyObject_CallOneArg(attr_key_fn, attrs)
                                           : (has_attrs == 0 ? Py_NewRef(empty_tuple) : NULL);
        PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype);
        PyObject *row = attr_key == NULL || dims == NULL || dtype == NULL ? NULL
                                                                            : PyTuple_Pack(5, op, attr_key, at, dims, dtype);
        Py_XDECREF(attr_key);
        Py_DECREF(at);
        Py_ssize_t n_rows = PyList_GET_SIZE(rows);
        PyObject *number = PyLong_FromSsize_t(n_rows);
        int failed = row == NULL || number == NULL || PyDict_SetItem(index, node, number);
        Py_XDECREF(number);
        if (failed || append_new(rows, row)) {
            if (failed) Py_XDECREF(row);
            goto done;
        }
        reads[n_rows] = (char)depends;
        if (PyList_Append(order, node)) goto done;
        PyObject *arrays = slot(node, off_arrays, "arrays");
        if (arrays == NULL) goto done;
        int live = PyObject_IsTrue(arrays);
        if (live < 0) goto done;
        if (live && node != root) {
            int keep = depends ? 1 : small_enough(shape, kept);
            if (keep < 0) goto done;
            if (keep && PyList_Append(outputs, node)) goto done;
        }
    }
    if (PyList_GET_SIZE(outputs) > n_roots) { /* each output once, first occurrence first */
        PyObject *unique = PyList_New(0), *once = PySet_New(NULL);
        if (unique == NULL || once == NULL) {
            Py_XDECREF(unique);
            Py_XDECREF(once);
            goto done;
        }
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outputs); i++) {
            PyObject *item = PyList_GET_ITEM(outputs, i);
            int found = PySet_Contains(once, item);
            if (found < 0 || (!found && (PySet_Add(once, item) || PyList_Append(unique, item)))) {
                Py_DECREF(unique);
                Py_DECREF(once);
                goto done;
            }
        }
        Py_DECREF(once);
        Py_SETREF(outputs, unique);
    }
    Py_ssize_t n_outputs = PyList_GET_SIZE(outputs);
    PyObject *numbers = PyTuple_New(n_outputs);
    if (numbers == NULL) goto done;
    for (Py_ssize_t i = 0; i < n_outputs; i++) {
        PyObject *number = PyDict_GetItemWithError(index, PyList_GET_ITEM(outputs, i));
        if (number == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "output not in the graph");
            Py_DECREF(numbers);
            goto done;
        }
        PyTuple_SET_ITEM(numbers, i, Py_NewRef(number));
    }
    PyObject *row_tuple = PyList_AsTuple(rows);
    PyObject *key = row_tuple == NULL ? NULL : PyTuple_Pack(2, row_tuple, numbers);
    Py_XDECREF(row_tuple);
    Py_DECREF(numbers);
    if (key == NULL) goto done;
    result = PyTuple_Pack(5, key, buffers, outputs, order, index);
    Py_DECREF(key);

done:
    PyMem_Free(stack.items);
    PyMem_Free(pending);
    PyMem_Free(reads);
    Py_XDECREF(seen);
    Py_XDECREF(index);
    Py_XDECREF(order);
    Py_XDECREF(rows);
    Py_XDECREF(buffers);
    Py_XDECREF(outputs);
    return result;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(Node, Shape, attr_key): read the slots' offsets."},
    {"walk", walk, METH_VARARGS, "walk(roots, kept_bytes) -> (key, buffers, outputs, order, index) or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_pending", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__pending(void) {
    str_parameter = PyUnicode_InternFromString("parameter");
    str_itemsize = PyUnicode_InternFromString("itemsize");
    empty_tuple = PyTuple_New(0);
    if (str_parameter == NULL || str_itemsize == NULL || empty_tuple == NULL) return NULL;
    return PyModule_Create(&module);
}
