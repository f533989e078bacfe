/* The scalar tier's common cases in C (``trace/scalars.py`` is the definition).

   A loop that branches on an element or stores an element read plus one (``if x[i] > 0.5``,
   ``counts[k] += 1``, ``float(a[i] * w + b)``) reads one short chain of exact ops on computed
   0-d values per step. ``scalars.value`` evaluates it with NumPy's reference of each op:
   ~2.5 us a chain of one op (the recursion's Python frames, the reference's dispatch, NumPy's
   error state and a 0-d array per op), against NumPy's whole step at 0.1-0.2 us. Here the
   same chain is evaluated on C scalars: IEEE's basic operations in the operands' own
   precision (a float32 sum rounded once, as a float32 add), integers wrapping at their
   width, comparisons, the logical and bitwise ops, ``select``: the operations the kernels
   compute, so the bits are the kernels' (tests/trace/test_scalar_tier.py compares both
   with the graph's run, op by op and chained). Anything else (another op or dtype, such as
   complex or float16; an operand not 0-d, not on the host, or not computed and not such an
   op; a chain past ``MOST_OPS``) is ``scalars.value``'s, which this module calls then, but
   where ``scalars.value`` is known to refuse it (``python_refuses``): most reads are of a
   reduction's chain (``float(max(w) - min(w))``), which it walked again only to refuse.

   configure(Node, Shape, ndarray, HOST, dtype codes, op codes, directions, most_ops, fallback, op defs)
   value(node) -> a Python scalar of the node's value, or what ``fallback(node)`` gives */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <structmember.h>

#include "_slots.h"

/* The dtypes: a code's kind and width (``scalars.C_DTYPES`` gives each dtype's code). */
enum { F64 = 1, F32, I64, I32, I16, I8, U64, U32, U16, U8, BOOL, N_CODES };
static const char code_kind[N_CODES] = {0, 'f', 'f', 'i', 'i', 'i', 'i', 'u', 'u', 'u', 'u', 'b'};
static const int code_bits[N_CODES] = {0, 64, 32, 64, 32, 16, 8, 64, 32, 16, 8, 8};

/* The ops (``scalars.C_OPS`` gives each op's code, and the kinds of its first operand it is
   evaluated for: its ``OpDef.exact_kinds`` but complex numbers, which are Python's). */
enum { ADD = 1, SUBTRACT, MULTIPLY, DIVIDE, NEGATE, NOT, AND, OR, XOR, COMPARE, SELECT, N_OPS };
enum { EQ = 1, NE, LT, LE, GT, GE };
/* What ``evaluate`` gives where ``scalars.value`` would give None: the read runs its graph. */
enum { REFUSED = 2 };

static Py_ssize_t off_op, off_operands, off_attrs, off_shape, off_buffer, off_device, off_dims, off_dtype;
static PyTypeObject *node_type, *shape_type, *ndarray_type;
static PyObject *host_transfers, *dtype_codes, *op_codes, *directions, *fallback_fn, *op_defs;
static PyObject *str_transfers, *str_dtype, *str_direction, *str_exact_kinds;
static int most_ops;

/* A value of one of the codes: a float's as a double (a float32's exactly), an integer's
   sign- or zero-extended to 64 bits, a bool's 0 or 1. */
typedef struct {
    int code;
    union {
        double f;
        int64_t i;
        uint64_t u;
    } v;
} Scalar;

typedef struct {
    PyObject *node;
    Scalar value;
} Entry;

static PyObject *configure(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *node, *shape, *ndarray, *host, *codes, *ops, *dirs, *fallback, *defs;
    int most;
    if (!PyArg_ParseTuple(args, "O!O!O!OO!O!O!iOO!", &PyType_Type, &node, &PyType_Type, &shape, &PyType_Type,
                          &ndarray, &host, &PyDict_Type, &codes, &PyDict_Type, &ops, &PyDict_Type, &dirs, &most,
                          &fallback, &PyDict_Type, &defs))
        return NULL;
    PyTypeObject *n = (PyTypeObject *)node, *s = (PyTypeObject *)shape;
    if (slot_offset(n, "op", &off_op) || slot_offset(n, "operands", &off_operands) ||
        slot_offset(n, "attrs", &off_attrs) || slot_offset(n, "shape", &off_shape) ||
        slot_offset(n, "buffer", &off_buffer) || slot_offset(n, "device", &off_device) ||
        slot_offset(s, "dims", &off_dims) || slot_offset(s, "dtype", &off_dtype))
        return NULL;
    Py_XSETREF(node_type, (PyTypeObject *)Py_NewRef(node));
    Py_XSETREF(shape_type, (PyTypeObject *)Py_NewRef(shape));
    Py_XSETREF(ndarray_type, (PyTypeObject *)Py_NewRef(ndarray));
    Py_XSETREF(host_transfers, Py_NewRef(host));
    Py_XSETREF(dtype_codes, Py_NewRef(codes));
    Py_XSETREF(op_codes, Py_NewRef(ops));
    Py_XSETREF(directions, Py_NewRef(dirs));
    Py_XSETREF(fallback_fn, Py_NewRef(fallback));
    Py_XSETREF(op_defs, Py_NewRef(defs));
    most_ops = most;
    Py_RETURN_NONE;
}

/* The code of ``dtype`` (0: none; -1: error). */
static int code_of(PyObject *dtype) {
    PyObject *code = PyDict_GetItemWithError(dtype_codes, dtype);
    if (code == NULL) return PyErr_Occurred() ? -1 : 0;
    return (int)PyLong_AsLong(code);
}

/* The shape of a node, if it is a 0-d Shape: its dtype's code (0: another; -1: error). */
static int scalar_code(PyObject *node) {
    PyObject *shape = SLOT(node, off_shape);
    if (shape == NULL || !Py_IS_TYPE(shape, shape_type)) return 0;
    PyObject *dims = SLOT(shape, off_dims), *dtype = SLOT(shape, off_dtype);
    if (dims == NULL || dtype == NULL || !PyTuple_CheckExact(dims) || PyTuple_GET_SIZE(dims)) return 0;
    return code_of(dtype);
}

/* Whether ``device`` keeps its buffers in host memory (-1: error). */
static int on_host(PyObject *device) { return transfers_are(device, str_transfers, host_transfers); }

/* A computed 0-d host buffer's element (1), 0 where it is of another kind, -1 on error. */
static int element(PyObject *node, PyObject *buffer, Scalar *out) {
    if (!Py_IS_TYPE(buffer, ndarray_type)) return 0;
    int host = on_host(SLOT(node, off_device));
    if (host <= 0) return host;
    PyObject *dtype = PyObject_GetAttr(buffer, str_dtype);
    if (dtype == NULL) return -1;
    int code = code_of(dtype);
    Py_DECREF(dtype);
    if (code <= 0) return code;
    Py_buffer view;
    if (PyObject_GetBuffer(buffer, &view, PyBUF_SIMPLE) < 0) {
        PyErr_Clear(); /* not contiguous, say: Python's */
        return 0;
    }
    int ok = view.len == code_bits[code] / 8;
    if (ok) {
        const char *p = view.buf;
        out->code = code;
        switch (code) {
        case F64: memcpy(&out->v.f, p, 8); break;
        case F32: { float f; memcpy(&f, p, 4); out->v.f = f; break; }
        case I64: memcpy(&out->v.i, p, 8); break;
        case I32: { int32_t i; memcpy(&i, p, 4); out->v.i = i; break; }
        case I16: { int16_t i; memcpy(&i, p, 2); out->v.i = i; break; }
        case I8: out->v.i = (int8_t)p[0]; break;
        case U64: memcpy(&out->v.u, p, 8); break;
        case U32: { uint32_t u; memcpy(&u, p, 4); out->v.u = u; break; }
        case U16: { uint16_t u; memcpy(&u, p, 2); out->v.u = u; break; }
        case U8: out->v.u = (uint8_t)p[0]; break;
        case BOOL: out->v.i = p[0] != 0; break;
        default: ok = 0;
        }
    }
    PyBuffer_Release(&view);
    return ok;
}

/* ``r`` (a 64-bit result) wrapped to the width of integer code ``code``. */
static Scalar wrapped(int code, uint64_t r) {
    Scalar s = {.code = code};
    int bits = code_bits[code];
    if (code_kind[code] == 'u') s.v.u = bits == 64 ? r : r & ((UINT64_C(1) << bits) - 1);
    else if (bits == 64) s.v.i = (int64_t)r;
    else {
        uint64_t sign = UINT64_C(1) << (bits - 1), low = r & ((UINT64_C(1) << bits) - 1);
        s.v.i = (int64_t)(low ^ sign) - (int64_t)sign;
    }
    return s;
}

/* The float arithmetic of code ``code``: a float32 op rounded once, in single precision. */
static double arithmetic(int op, int code, double a, double b) {
    if (code == F32) {
        float x = (float)a, y = (float)b, r;
        switch (op) {
        case ADD: r = x + y; break;
        case SUBTRACT: r = x - y; break;
        case MULTIPLY: r = x * y; break;
        case DIVIDE: r = x / y; break;
        default: r = -x;
        }
        return r;
    }
    switch (op) {
    case ADD: return a + b;
    case SUBTRACT: return a - b;
    case MULTIPLY: return a * b;
    case DIVIDE: return a / b;
    default: return -a;
    }
}

/* ``x`` and ``y`` compared in ``direction``, C's operators (IEEE's for floats: NaN unordered). */
#define COMPARED(direction, x, y)                                                                                       \
    ((direction) == EQ ? (x) == (y) : (direction) == NE ? (x) != (y) : (direction) == LT ? (x) < (y)                     \
     : (direction) == LE ? (x) <= (y) : (direction) == GT ? (x) > (y) : (x) >= (y))

static int compared(int direction, int kind, const Scalar *a, const Scalar *b) {
    if (kind == 'f') return COMPARED(direction, a->v.f, b->v.f);
    if (kind == 'u') return COMPARED(direction, a->v.u, b->v.u);
    return COMPARED(direction, a->v.i, b->v.i);
}

/* REFUSED where ``scalars.value`` gives None at a node of op ``op_name`` and ``operands``
   whatever their values are: no op of that name (``hlo.OPS``, read at each call, as
   ``scalars.value`` reads it), no operand, a first operand of a kind the op is not exact
   for, or an operand not computed and not 0-d; else 0 (it may evaluate the node); -1 on
   error. */
static int python_refuses(PyObject *op_name, PyObject *operands) {
    PyObject *opdef = PyDict_GetItemWithError(op_defs, op_name);
    if (opdef == NULL) return PyErr_Occurred() ? -1 : REFUSED;
    Py_ssize_t n = PyTuple_GET_SIZE(operands);
    if (n == 0) return REFUSED;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *o = PyTuple_GET_ITEM(operands, k), *shape;
        if (!Py_IS_TYPE(o, node_type) || (shape = SLOT(o, off_shape)) == NULL || !Py_IS_TYPE(shape, shape_type))
            return 0;
        PyObject *dims = SLOT(shape, off_dims);
        if (dims == NULL || !PyTuple_CheckExact(dims)) return 0;
        if (k == 0) {
            int code = code_of(SLOT(shape, off_dtype));
            if (code <= 0) return code; /* a kind this module has no code of (complex): Python's */
            PyObject *kinds = PyObject_GetAttr(opdef, str_exact_kinds);
            if (kinds == NULL) return -1;
            const char *text = PyUnicode_Check(kinds) ? PyUnicode_AsUTF8(kinds) : NULL;
            int exact = text != NULL && strchr(text, code_kind[code]) != NULL;
            Py_DECREF(kinds);
            if (text == NULL) return PyErr_Occurred() ? -1 : 0;
            if (!exact) return REFUSED;
        }
        if (SLOT(o, off_buffer) == Py_None && PyTuple_GET_SIZE(dims)) return REFUSED;
    }
    return 0;
}

/* ``node``'s op on its operands' values ``args`` (all of the node's operand code, but a
   select's predicate), as a value of ``code`` (the node's): 1, or 0 where it is not one
   this module evaluates, -1 on error. */
static int apply(PyObject *node, int op, int code, const Scalar *args, Py_ssize_t n, Scalar *out) {
    int kind = code_kind[args[0].code];
    if (op == SELECT) {
        if (n != 3 || args[1].code != code || args[2].code != code) return 0;
        *out = args[0].v.i ? args[1] : args[2];
        return 1;
    }
    for (Py_ssize_t k = 1; k < n; k++)
        if (args[k].code != args[0].code) return 0;
    if (op == COMPARE) {
        PyObject *attrs = SLOT(node, off_attrs);
        if (n != 2 || code != BOOL || attrs == NULL || !PyDict_CheckExact(attrs)) return 0;
        PyObject *name = PyDict_GetItemWithError(attrs, str_direction);
        PyObject *found = name == NULL ? NULL : PyDict_GetItemWithError(directions, name);
        if (found == NULL) return PyErr_Occurred() ? -1 : 0;
        out->code = BOOL;
        out->v.i = compared((int)PyLong_AsLong(found), kind, &args[0], &args[1]);
        return 1;
    }
    int unary = op == NEGATE || op == NOT;
    if (n != (unary ? 1 : 2) || code != args[0].code) return 0;
    const Scalar *a = &args[0], *b = &args[unary ? 0 : 1];
    if (kind == 'f') {
        if (op > NEGATE) return 0;
        out->code = code;
        out->v.f = arithmetic(op, code, a->v.f, b->v.f);
        return 1;
    }
    if (kind == 'b') {
        out->code = BOOL;
        switch (op) {
        case NOT: out->v.i = !a->v.i; return 1;
        case AND: out->v.i = a->v.i & b->v.i; return 1;
        case OR: out->v.i = a->v.i | b->v.i; return 1;
        case XOR: out->v.i = a->v.i ^ b->v.i; return 1;
        default: return 0;
        }
    }
    uint64_t x = a->v.u, y = b->v.u, r; /* two's complement: the same bits either kind */
    switch (op) {
    case ADD: r = x + y; break;
    case SUBTRACT: r = x - y; break;
    case MULTIPLY: r = x * y; break;
    case NEGATE: r = UINT64_C(0) - x; break;
    case NOT: r = ~x; break;
    case AND: r = x & y; break;
    case OR: r = x | y; break;
    case XOR: r = x ^ y; break;
    default: return 0;
    }
    *out = wrapped(code, r);
    return 1;
}

/* The pending 0-d ``node``'s value (1), as ``scalars.value`` evaluates it: each pending
   operand once (``memo``), at most ``most_ops - 1`` of them besides the root; 0 where this
   module does not evaluate it, REFUSED where ``scalars.value`` would not either, -1 on
   error. */
static int evaluate(PyObject *node, Entry *memo, int *entered, Scalar *out) {
    PyObject *op_name = SLOT(node, off_op), *operands = SLOT(node, off_operands);
    if (op_name == NULL || operands == NULL || !PyUnicode_CheckExact(op_name) || !PyTuple_CheckExact(operands))
        return 0;
    int refused = python_refuses(op_name, operands);
    if (refused) return refused;
    Py_ssize_t n = PyTuple_GET_SIZE(operands);
    if (n > 3) return 0;
    PyObject *found = PyDict_GetItemWithError(op_codes, op_name);
    if (found == NULL) return PyErr_Occurred() ? -1 : 0;
    if (!PyTuple_CheckExact(found) || PyTuple_GET_SIZE(found) != 2 || !PyBytes_CheckExact(PyTuple_GET_ITEM(found, 1)))
        return 0;
    int op = (int)PyLong_AsLong(PyTuple_GET_ITEM(found, 0));
    const char *kinds = PyBytes_AS_STRING(PyTuple_GET_ITEM(found, 1));
    int code = scalar_code(node);
    if (code <= 0 || op <= 0 || op >= N_OPS) return code < 0 ? -1 : 0;
    Scalar args[3];
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *o = PyTuple_GET_ITEM(operands, k);
        if (!Py_IS_TYPE(o, node_type)) return 0;
        int operand_code = scalar_code(o);
        if (operand_code <= 0) return operand_code;
        if (k == 0 && !strchr(kinds, code_kind[operand_code])) return 0;
        PyObject *buffer = SLOT(o, off_buffer);
        if (buffer == NULL) return 0;
        if (buffer != Py_None) {
            int got = element(o, buffer, &args[k]);
            if (got <= 0) return got;
            if (args[k].code != operand_code) return 0;
            continue;
        }
        int seen = 0;
        for (int m = 0; m < *entered && !seen; m++)
            if (memo[m].node == o) {
                args[k] = memo[m].value;
                seen = 1;
            }
        if (seen) continue;
        if (*entered >= most_ops - 1) return 0;
        int at = (*entered)++;
        memo[at].node = o;
        int got = evaluate(o, memo, entered, &memo[at].value);
        if (got != 1) return got;
        args[k] = memo[at].value;
    }
    return apply(node, op, code, args, n, out);
}

static PyObject *as_python(const Scalar *s) {
    switch (code_kind[s->code]) {
    case 'f': return PyFloat_FromDouble(s->v.f);
    case 'u': return PyLong_FromUnsignedLongLong(s->v.u);
    case 'b': return PyBool_FromLong((long)s->v.i);
    default: return PyLong_FromLongLong(s->v.i);
    }
}

static PyObject *value(PyObject *self, PyObject *node) {
    (void)self;
    if (node_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plaidarray.trace._scalars.configure was not called");
        return NULL;
    }
    if (Py_IS_TYPE(node, node_type) && SLOT(node, off_buffer) == Py_None && most_ops > 0) {
        Entry memo[16];
        int entered = 0;
        Scalar found;
        if (most_ops > 16) most_ops = 16;
        int got = evaluate(node, memo, &entered, &found);
        if (got < 0) return NULL;
        if (got == REFUSED) Py_RETURN_NONE;
        /* a float32 NaN is Python's: its value here went through a double, which quiets a
           signalling NaN's payload that NumPy's float32 ops keep (a store would differ) */
        if (got && !(found.code == F32 && found.v.f != found.v.f)) return as_python(&found);
    }
    return PyObject_CallOneArg(fallback_fn, node);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Node, Shape, ndarray, HOST, dtype codes, op codes, directions, most_ops, fallback, op defs)."},
    {"value", value, METH_O, "value(node): the scalar tier's value of a pending 0-d node, as a Python scalar where "
                             "evaluated here, else fallback(node)'s."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_scalars", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__scalars(void) {
    str_transfers = PyUnicode_InternFromString("transfers");
    str_dtype = PyUnicode_InternFromString("dtype");
    str_direction = PyUnicode_InternFromString("direction");
    str_exact_kinds = PyUnicode_InternFromString("exact_kinds");
    if (str_transfers == NULL || str_dtype == NULL || str_direction == NULL || str_exact_kinds == NULL) return NULL;
    return PyModule_Create(&module);
}
