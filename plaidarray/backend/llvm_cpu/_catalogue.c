/* The installation's catalogue of op kernels read in C (``op_catalogue.py`` is the definition).

   A process's first use of an op kernel the installation built finds it in the catalogue by
   its signature: the signature's key (its values written out with their types, hashed),
   the key's slot, the record's checksum and the record itself. In Python that was four
   steps of small objects (a pickler, struct unpacking, a slice of the map, ``marshal``),
   ~35 us of each first use among a script's other work, ~1,000 first uses over the eager
   benchmark's first runs. Here one call does them, with the same hash (``hashlib``'s
   BLAKE2b, called from C) over the same bytes as ``op_catalogue._written`` writes, so that
   either finds what either recorded (tests/unit/backend/test_op_catalogue_c.py compares
   them).

   key(signature) -> bytes | None
     the signature's key: 16 bytes; None where a value has no written form (another type).
   find(memory, n_slots, header_size, signature) -> object | None
     the record of ``signature`` in the catalogue ``memory`` (a buffer: its header of
     ``header_size`` bytes, then ``n_slots`` slots), ``marshal``-loaded; None where it has
     none, its record is out of the buffer or its checksum does not hold, or it does not
     load.

   The written form (``op_catalogue._written``): a tuple '(' its items ')'; None 'N'; True
   'T', False 'F'; an int 'i' and its 8 bytes (little-endian two's complement), or past
   int64 'I', its decimal digits and ';'; a float 'f' and its 8 bytes (IEEE 754); a
   complex 'c' and its two; a str 's', its UTF-8 length (4 bytes) and bytes; bytes 'b',
   likewise; a NumPy dtype of ``STANDARD`` kind 'd', then its ``str`` as a str is written,
   any other 'D' and its ``repr`` so. Exact types only (a named tuple, an int enum: none),
   at most ``DEPTH`` tuples deep. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <marshal.h>
#include <stdint.h>
#include <string.h>

#define DEPTH 32
#define DIGEST 16
/* A slot: the key, the record's offset and length (uint32), its checksum (``op_catalogue._SLOT``). */
#define SLOT_BYTES (DIGEST + 4 + 4 + DIGEST)

static PyObject *blake2b;    /* hashlib.blake2b */
static PyObject *dtype_type; /* numpy.dtype */
static PyObject *size_16;     /* 16, the digest size */
static PyObject *sized;       /* ("digest_size",) */
static PyObject *sized_keyed; /* ("digest_size", "key") */
/* The dtype characters written as 'd' (``op_catalogue.STANDARD``). */
static const char STANDARD[] = "?bhilqBHILQefdgFDG";

/* The dtypes of ``STANDARD`` kinds written so far, each with its tag and text: a signature
   holds a few (its operands', its result's), the same few in every signature of a script,
   and asking each for its kind and its ``str`` again was most of writing a key (~5 us of
   each of its first uses). Such a dtype's ``str`` never changes (a structured one's fields
   may be renamed: written anew each time); those kept stay alive with the module. */
#define DTYPES_WRITTEN 32
typedef struct {
    PyObject *dtype;
    char tag;
    PyObject *text;
} Written;
static Written dtypes_written[DTYPES_WRITTEN];
static int n_dtypes_written;

typedef struct {
    char *data;
    Py_ssize_t length, capacity;
} Bytes;

static int grow(Bytes *out, Py_ssize_t more) {
    if (out->length + more <= out->capacity) return 1;
    Py_ssize_t capacity = out->capacity * 2 > out->length + more ? out->capacity * 2 : out->length + more + 64;
    char *data = PyMem_Realloc(out->data, (size_t)capacity);
    if (data == NULL) {
        PyErr_NoMemory();
        return 0;
    }
    out->data = data;
    out->capacity = capacity;
    return 1;
}

static int put(Bytes *out, const void *data, Py_ssize_t length) {
    if (!grow(out, length)) return 0;
    memcpy(out->data + out->length, data, (size_t)length);
    out->length += length;
    return 1;
}

static int put_tag(Bytes *out, char tag) { return put(out, &tag, 1); }

static int put_sized(Bytes *out, char tag, const char *data, Py_ssize_t length) {
    unsigned char size[4];
    if (length > 0x7fffffff) return -1;
    for (int k = 0; k < 4; k++) size[k] = (unsigned char)(((uint32_t)length >> (8 * k)) & 0xff);
    return put_tag(out, tag) && put(out, size, 4) && put(out, data, length) ? 1 : 0;
}

static int put_text(Bytes *out, char tag, PyObject *text) {
    Py_ssize_t length;
    const char *data = PyUnicode_AsUTF8AndSize(text, &length);
    if (data == NULL) {
        PyErr_Clear(); /* a lone surrogate: no written form */
        return -1;
    }
    return put_sized(out, tag, data, length);
}

static int put_le(Bytes *out, char tag, const void *value, int n) {
    unsigned char bytes[16];
    memcpy(bytes, value, (size_t)n); /* x86-64 and aarch64 are little-endian, as the form is */
    return put_tag(out, tag) && put(out, bytes, n) ? 1 : 0;
}

/* 1 written, 0 an error raised, -1 no written form. */
static int written(Bytes *out, PyObject *value, int depth) {
    PyTypeObject *type = Py_TYPE(value);
    if (type == &PyTuple_Type) {
        if (depth >= DEPTH) return -1;
        if (!put_tag(out, '(')) return 0;
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(value); i++) {
            int done = written(out, PyTuple_GET_ITEM(value, i), depth + 1);
            if (done != 1) return done;
        }
        return put_tag(out, ')');
    }
    if (value == Py_None) return put_tag(out, 'N');
    if (value == Py_True) return put_tag(out, 'T');
    if (value == Py_False) return put_tag(out, 'F');
    if (type == &PyLong_Type) {
        int overflow = 0;
        long long n = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (n == -1 && PyErr_Occurred()) return 0;
        if (!overflow) {
            int64_t word = (int64_t)n;
            return put_le(out, 'i', &word, 8);
        }
        PyObject *digits = PyObject_Str(value);
        if (digits == NULL) { /* past the digits Python writes out: no written form */
            if (!PyErr_ExceptionMatches(PyExc_ValueError)) return 0;
            PyErr_Clear();
            return -1;
        }
        Py_ssize_t length;
        const char *data = PyUnicode_AsUTF8AndSize(digits, &length);
        int done = data != NULL && put_tag(out, 'I') && put(out, data, length) && put_tag(out, ';');
        Py_DECREF(digits);
        return done;
    }
    if (type == &PyFloat_Type) {
        double x = PyFloat_AS_DOUBLE(value);
        return put_le(out, 'f', &x, 8);
    }
    if (type == &PyComplex_Type) {
        double parts[2] = {PyComplex_RealAsDouble(value), PyComplex_ImagAsDouble(value)};
        return put_le(out, 'c', parts, 16);
    }
    if (type == &PyUnicode_Type) return put_text(out, 's', value);
    if (type == &PyBytes_Type) return put_sized(out, 'b', PyBytes_AS_STRING(value), PyBytes_GET_SIZE(value));
    for (int i = 0; i < n_dtypes_written; i++)
        if (dtypes_written[i].dtype == value)
            return put_text(out, dtypes_written[i].tag, dtypes_written[i].text);
    int is_dtype = PyObject_IsInstance(value, dtype_type);
    if (is_dtype < 0) return 0;
    if (!is_dtype) return -1;
    PyObject *kind = PyObject_GetAttrString(value, "char");
    if (kind == NULL) return 0;
    const char *kind_text = PyUnicode_AsUTF8(kind);
    int standard = kind_text != NULL && kind_text[0] != '\0' && kind_text[1] == '\0' && strchr(STANDARD, kind_text[0]);
    Py_DECREF(kind);
    if (kind_text == NULL) return 0;
    PyObject *text = standard ? PyObject_GetAttrString(value, "str") : PyObject_Repr(value);
    if (text == NULL) return 0;
    int done = PyUnicode_Check(text) ? put_text(out, standard ? 'd' : 'D', text) : -1;
    if (done == 1 && standard && n_dtypes_written < DTYPES_WRITTEN) /* kept with its dtype, which it keeps alive */
        dtypes_written[n_dtypes_written++] = (Written){Py_NewRef(value), 'd', Py_NewRef(text)};
    Py_DECREF(text);
    return done;
}

/* BLAKE2b of `data`, 16 bytes, keyed with `key` (NULL: none): hashlib's, called from C with
   its keywords' names made once (a keyed call copied a dict of them at each lookup). */
static PyObject *hashed(const char *data, Py_ssize_t length, PyObject *key) {
    PyObject *bytes = PyBytes_FromStringAndSize(data, length);
    if (bytes == NULL) return NULL;
    PyObject *arguments[3] = {bytes, size_16, key};
    PyObject *hash = PyObject_Vectorcall(blake2b, arguments, 1, key != NULL ? sized_keyed : sized);
    Py_DECREF(bytes);
    if (hash == NULL) return NULL;
    PyObject *digest = PyObject_CallMethod(hash, "digest", NULL);
    Py_DECREF(hash);
    return digest;
}

/* The key of `signature`, or None (a new reference; NULL: an error raised). */
static PyObject *signature_key(PyObject *signature) {
    Bytes out = {NULL, 0, 0};
    int done = written(&out, signature, 0);
    PyObject *key = done == 1 ? hashed(out.data, out.length, NULL) : done == 0 ? NULL : Py_NewRef(Py_None);
    PyMem_Free(out.data);
    return key;
}

static PyObject *key(PyObject *module, PyObject *signature) { return signature_key(signature); }

static PyObject *find(PyObject *module, PyObject *args) {
    PyObject *memory, *signature;
    Py_ssize_t n_slots, header;
    if (!PyArg_ParseTuple(args, "OnnO:find", &memory, &n_slots, &header, &signature)) return NULL;
    PyObject *digest = signature_key(signature);
    if (digest == NULL || digest == Py_None) return digest;
    if (!PyBytes_Check(digest) || PyBytes_GET_SIZE(digest) != DIGEST || n_slots < 1 || header < 0) {
        Py_DECREF(digest);
        PyErr_SetString(PyExc_ValueError, "find: not a catalogue's slots");
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(memory, &view, PyBUF_SIMPLE) < 0) {
        Py_DECREF(digest);
        return NULL;
    }
    const unsigned char *base = view.buf, *wanted = (const unsigned char *)PyBytes_AS_STRING(digest);
    static const unsigned char EMPTY[DIGEST];
    PyObject *found = NULL;
    uint64_t first;
    memcpy(&first, wanted, 8); /* little-endian, as ``op_catalogue._first_slot`` reads it */
    Py_ssize_t slot = (Py_ssize_t)(first % (uint64_t)n_slots);
    if (header + n_slots * SLOT_BYTES > view.len) goto none;
    for (Py_ssize_t probe = 0; probe < n_slots; probe++, slot = (slot + 1) % n_slots) {
        const unsigned char *at = base + header + slot * SLOT_BYTES;
        if (memcmp(at, wanted, DIGEST) == 0) {
            uint32_t offset, length;
            memcpy(&offset, at + DIGEST, 4);
            memcpy(&length, at + DIGEST + 4, 4);
            if ((Py_ssize_t)offset + (Py_ssize_t)length > view.len) goto none;
            PyObject *checksum = hashed((const char *)base + offset, length, digest);
            if (checksum == NULL) goto done;
            int holds = PyBytes_GET_SIZE(checksum) == DIGEST &&
                        memcmp(PyBytes_AS_STRING(checksum), at + DIGEST + 8, DIGEST) == 0;
            Py_DECREF(checksum);
            if (!holds) goto none;
            found = PyMarshal_ReadObjectFromString((const char *)base + offset, length);
            if (found == NULL) {
                PyErr_Clear(); /* a record that is not one */
                goto none;
            }
            goto done;
        }
        if (memcmp(at, EMPTY, DIGEST) == 0) break;
    }
none:
    found = Py_NewRef(Py_None);
done:
    PyBuffer_Release(&view);
    Py_DECREF(digest);
    return found;
}

static PyMethodDef methods[] = {
    {"key", key, METH_O, "The key of an op signature in the installation's catalogue, or None."},
    {"find", find, METH_VARARGS, "The marshal-loaded record of an op signature in a catalogue's memory, or None."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_catalogue", "op_catalogue's lookup in C (the module's source comment).", -1, methods,
};

PyMODINIT_FUNC PyInit__catalogue(void) {
    PyObject *hashlib = PyImport_ImportModule("hashlib");
    if (hashlib == NULL) return NULL;
    blake2b = PyObject_GetAttrString(hashlib, "blake2b");
    Py_DECREF(hashlib);
    PyObject *numpy = blake2b != NULL ? PyImport_ImportModule("numpy") : NULL;
    if (numpy == NULL) return NULL;
    dtype_type = PyObject_GetAttrString(numpy, "dtype");
    Py_DECREF(numpy);
    size_16 = dtype_type != NULL ? PyLong_FromLong(DIGEST) : NULL;
    sized = size_16 != NULL ? Py_BuildValue("(s)", "digest_size") : NULL;
    sized_keyed = sized != NULL ? Py_BuildValue("(ss)", "digest_size", "key") : NULL;
    if (sized_keyed == NULL) return NULL;
    return PyModule_Create(&module);
}
