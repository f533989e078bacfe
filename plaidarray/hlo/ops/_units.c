/* ``fft.unit_parts`` in C (``hlo/ops/fft.py`` is the definition).

   Every plan of a new FFT length takes its twiddles from ``unit_parts``: the angle of each
   turn reduced in integers to within pi/4 of a quarter turn, its cosine and sine taken in
   long double and rounded to float64, then placed by the quarter turn. In NumPy that is
   ~20 calls over arrays of tens of elements, ~22 us a table of 100 in a loop and more among
   a script's other work, where a script's transforms of 40 lengths make 40 tables; the
   long double cosine and sine are ~0.12 us an element of it either way. Here
   each element runs the same operations on C scalars: the integer reduction, the small
   angle as one long double product (the scale pi/4 / n divided in long double, as NumPy
   divides a long double scalar by n), ``cosl`` and ``sinl`` (which NumPy's long double
   cosine and sine call), each rounded once to float64, the sine negated where the angle
   was measured back from the next eighth, and the parts picked and multiplied by the
   quarter turn's signs (+-1.0: exact, zeros' signs included): the same bits
   (tests/unit/hlo/test_fft_units.py compares both over many lengths). A long run of one
   length takes each reduced angle's cosine and sine once (``Memo``): a new length's
   tables were ~0.14 ms of its first transform at n ~ 1000, 7 ms at n = 65536.

   unit_parts(turns, n, quarter_turn, re, im) -> bool
     turns: int64 buffer of one dimension; n: an int, or an int64 buffer of turns' length;
     quarter_turn: the bytes of the long double pi/2 (``fft._QUARTER_TURN``); re, im:
     writable float64 buffers of turns' length, filled. False (nothing written that the
     caller keeps) where the definition is left to NumPy: a turn negative or past
     INT64_MAX / 8, an n not positive. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The signs of the real and imaginary parts by quarter turn k (``fft._REAL_SIGNS``,
   ``fft._IMAGINARY_SIGNS``). */
static const double REAL_SIGNS[4] = {1.0, -1.0, -1.0, 1.0};
static const double IMAGINARY_SIGNS[4] = {1.0, 1.0, -1.0, -1.0};

/* The cosine and sine of the reduced angle of `reduced` (in [0, n]) eighths' parts of one
   length, each rounded once to float64: the same operations on the same long double,
   whichever element asks first. */
typedef struct {
    double *c, *s;
    unsigned char *have;
} Memo;

static void cos_sin(int64_t reduced, long double scale, Memo *memo, double *c, double *s) {
    if (memo != NULL && memo->have[reduced]) {
        *c = memo->c[reduced];
        *s = memo->s[reduced];
        return;
    }
    long double d = (long double)reduced * scale;
    *c = (double)cosl(d);
    *s = (double)sinl(d);
    if (memo != NULL) {
        memo->c[reduced] = *c;
        memo->s[reduced] = *s;
        memo->have[reduced] = 1;
    }
}

/* A run of `count` turns of one length n takes each reduced angle's cosine and sine once
   where they repeat (a table's turns are multiples of its stages' strides: a power of
   two's real table of n points meets each of ~n/8 reduced angles four times; Bluestein's
   chirp j * j % 2n each twice), which cost ~0.12 us an element in cosl and sinl: where
   the run is at least MEMO_RUN long and n at most MEMO_SPAN times it, so that the memo is
   never much larger than the tables it fills. */
#define MEMO_RUN 64
#define MEMO_SPAN 4

static int memo_open(Memo *memo, int64_t n, Py_ssize_t run) {
    if (run < MEMO_RUN || n / MEMO_SPAN > run) return 0;
    memo->have = PyMem_Calloc((size_t)n + 1, 1);
    memo->c = PyMem_Malloc(((size_t)n + 1) * sizeof(double));
    memo->s = PyMem_Malloc(((size_t)n + 1) * sizeof(double));
    if (memo->have == NULL || memo->c == NULL || memo->s == NULL) { /* then without: the same bits */
        PyMem_Free(memo->have);
        PyMem_Free(memo->c);
        PyMem_Free(memo->s);
        return 0;
    }
    return 1;
}

static void memo_close(Memo *memo) {
    PyMem_Free(memo->have);
    PyMem_Free(memo->c);
    PyMem_Free(memo->s);
}

static int fill(const int64_t *turns, const int64_t *ns, int64_t n_all, Py_ssize_t count, long double quarter,
                double *re, double *im) {
    Py_ssize_t i = 0;
    while (i < count) {
        int64_t n = ns != NULL ? ns[i] : n_all;
        if (n <= 0) return 0;
        Py_ssize_t end = i + 1; /* the run of elements of this length */
        if (ns == NULL)
            end = count;
        else
            while (end < count && ns[end] == n) end++;
        long double scale = quarter / 2 / (long double)n; /* as NumPy divides a long double scalar by n */
        Memo memo;
        int memoized = memo_open(&memo, n, end - i);
        for (; i < end; i++) {
            int64_t t = turns[i];
            if (t < 0 || t > INT64_MAX / 8) {
                if (memoized) memo_close(&memo);
                return 0;
            }
            int64_t eighths = 8 * t / n, rest = 8 * t % n; /* both >= 0: NumPy's floor division */
            int above = (int)(eighths & 1);                  /* nearer (eighths + 1) pi/4 */
            int k = (int)(((eighths + above) >> 1) & 3);
            double c, s;
            cos_sin(above ? n - rest : rest, scale, memoized ? &memo : NULL, &c, &s);
            if (above) s = -s;
            re[i] = ((k & 1) ? s : c) * REAL_SIGNS[k];
            im[i] = ((k & 1) ? c : s) * IMAGINARY_SIGNS[k];
        }
        if (memoized) memo_close(&memo);
    }
    return 1;
}

/* Whether a buffer's struct format (a native byte order's, as NumPy gives it) is one item
   of `kind`: 'i' an int64, 'f' a float64. */
static int of_kind(const char *format, char kind) {
    if (format == NULL) return 0;
    if (*format == '@' || *format == '=' || *format == '<') format++; /* native: x86-64 and aarch64 are little-endian */
    if (format[0] == '\0' || format[1] != '\0') return 0;
    if (kind == 'f') return format[0] == 'd';
    return format[0] == 'q' || (format[0] == 'l' && sizeof(long) == 8);
}

/* A contiguous buffer of one dimension holding `count` items of `kind` (count < 0: any). */
static int take(PyObject *object, Py_buffer *view, int writable, char kind, Py_ssize_t count, const char *what) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0)
        return 0;
    if (view->ndim != 1 || view->itemsize != 8 || !of_kind(view->format, kind) ||
        (count >= 0 && view->shape[0] != count)) {
        if (count >= 0)
            PyErr_Format(PyExc_ValueError, "unit_parts: %s is not a buffer of %zd %s", what, count,
                         kind == 'f' ? "float64 values" : "int64 values");
        else
            PyErr_Format(PyExc_ValueError, "unit_parts: %s is not a buffer of int64 values in one dimension", what);
        PyBuffer_Release(view);
        return 0;
    }
    return 1;
}

static PyObject *unit_parts(PyObject *module, PyObject *args) {
    PyObject *turns_object, *n_object, *re_object, *im_object;
    Py_buffer quarter_bytes;
    if (!PyArg_ParseTuple(args, "OOy*OO:unit_parts", &turns_object, &n_object, &quarter_bytes, &re_object,
                          &im_object))
        return NULL;
    PyObject *answer = NULL;
    Py_buffer turns, ns, re, im;
    int have_ns = 0;
    long double quarter;
    int64_t n_all = 1;
    if (quarter_bytes.len < (Py_ssize_t)sizeof quarter) {
        PyErr_SetString(PyExc_ValueError, "unit_parts: quarter_turn is not a long double's bytes");
        PyBuffer_Release(&quarter_bytes);
        return NULL;
    }
    memcpy(&quarter, quarter_bytes.buf, sizeof quarter);
    PyBuffer_Release(&quarter_bytes);
    if (!take(turns_object, &turns, 0, 'i', -1, "turns")) return NULL;
    Py_ssize_t count = turns.shape[0];
    if (PyLong_Check(n_object)) {
        int overflow = 0;
        long long n = PyLong_AsLongLongAndOverflow(n_object, &overflow);
        if (n == -1 && PyErr_Occurred()) goto turns_taken;
        if (overflow || n <= 0) {
            answer = Py_NewRef(Py_False);
            goto turns_taken;
        }
        n_all = (int64_t)n;
    } else {
        if (!take(n_object, &ns, 0, 'i', count, "n")) goto turns_taken;
        have_ns = 1;
    }
    if (!take(re_object, &re, 1, 'f', count, "re")) goto ns_taken;
    if (!take(im_object, &im, 1, 'f', count, "im")) goto re_taken;
    answer = Py_NewRef(fill((const int64_t *)turns.buf, have_ns ? (const int64_t *)ns.buf : NULL, n_all, count, quarter,
                            (double *)re.buf, (double *)im.buf)
                           ? Py_True
                           : Py_False);
    PyBuffer_Release(&im);
re_taken:
    PyBuffer_Release(&re);
ns_taken:
    if (have_ns) PyBuffer_Release(&ns);
turns_taken:
    PyBuffer_Release(&turns);
    return answer;
}

static PyMethodDef methods[] = {
    {"unit_parts", unit_parts, METH_VARARGS, "fft.unit_parts's real and imaginary parts, written into re and im."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_units", "fft.unit_parts in C (the module's source comment).", -1, methods,
};

PyMODINIT_FUNC PyInit__units(void) { return PyModule_Create(&module); }
