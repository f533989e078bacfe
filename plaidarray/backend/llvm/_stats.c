/* stat(2) of many files in one call, without the GIL: the check of the sources' stamp
   (sources.py) stats every source file, and doing it on a thread while the package is
   imported only pays where the thread holds the GIL twice, not once a file (os.stat
   releases and takes it again each call, and a thread switch each time slowed the
   import more than the check took). sources.stats_in_python is its definition.

   stats(paths) -> [(size, mtime_ns), ...] (paths: a sequence of str), or None if a file
   cannot be stat'ed. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <sys/stat.h>

static PyObject *stats(PyObject *self, PyObject *paths) {
    PyObject *held = PySequence_Tuple(paths); /* the UTF-8 names live as long as it does */
    if (held == NULL) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(held);
    const char **names = PyMem_Calloc(n ? n : 1, sizeof(char *));
    long long *found = PyMem_Calloc(n ? 2 * n : 1, sizeof(long long));
    PyObject *result = NULL;
    if (names == NULL || found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *path = PyTuple_GET_ITEM(held, i);
        Py_ssize_t size;
        if (!PyUnicode_Check(path)) {
            PyErr_SetString(PyExc_TypeError, "stats: expected paths (str)");
            goto done;
        }
        names[i] = PyUnicode_AsUTF8AndSize(path, &size);
        if (names[i] == NULL) goto done;
        if (strlen(names[i]) != (size_t)size) {
            PyErr_SetString(PyExc_ValueError, "stats: a path holds a NUL character");
            goto done;
        }
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        struct stat st;
        if (stat(names[i], &st) != 0) {
            failed = 1;
        } else {
            found[2 * i] = (long long)st.st_size;
            found[2 * i + 1] = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
        }
    }
    Py_END_ALLOW_THREADS
    if (failed) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    result = PyList_New(n);
    if (result == NULL) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = Py_BuildValue("(LL)", found[2 * i], found[2 * i + 1]);
        if (pair == NULL) {
            Py_CLEAR(result);
            goto done;
        }
        PyList_SET_ITEM(result, i, pair);
    }
done:
    Py_DECREF(held);
    PyMem_Free(names);
    PyMem_Free(found);
    return result;
}

static PyMethodDef methods[] = {
    {"stats", stats, METH_O, "[(size, mtime_ns)] of each path, or None if one cannot be stat'ed."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_stats", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__stats(void) { return PyModule_Create(&module); }
