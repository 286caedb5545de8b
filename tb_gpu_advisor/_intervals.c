/* The union of intervals sorted by start, in one pass (intervals.py's NumPy version makes about nine).
 *
 * union_sorted(starts, ends) -> (starts, ends) as bytearrays of int64, or None when the non-empty
 * intervals are not sorted by start (the caller sorts them then). Empty intervals (end <= start) are
 * dropped; intervals that overlap or touch are merged. Built by setup.py when a compiler is there;
 * intervals.py works without it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

static PyObject *union_sorted(PyObject *self, PyObject *args) {
    Py_buffer sb, eb;
    if (!PyArg_ParseTuple(args, "y*y*", &sb, &eb)) return NULL;
    PyObject *so = NULL, *eo = NULL;
    if (sb.len != eb.len || sb.len % 8) {
        PyErr_SetString(PyExc_ValueError, "union_sorted: two int64 buffers of one length");
        goto fail;
    }
    Py_ssize_t n = sb.len / 8, m = 0;
    if (!(so = PyByteArray_FromStringAndSize(NULL, sb.len)) || !(eo = PyByteArray_FromStringAndSize(NULL, sb.len)))
        goto fail;
    const int64_t *s = sb.buf, *e = eb.buf;
    int64_t *os = (int64_t *)PyByteArray_AS_STRING(so), *oe = (int64_t *)PyByteArray_AS_STRING(eo);
    int sorted = 1, have = 0;
    int64_t prev = 0, cs = 0, ce = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = s[i], b = e[i];
        if (b <= a) continue;
        if (have && a < prev) {
            sorted = 0;
            break;
        }
        prev = a;
        if (have && a <= ce) {
            if (b > ce) ce = b;
        } else {
            if (have) {
                os[m] = cs;
                oe[m] = ce;
                m++;
            }
            cs = a;
            ce = b;
            have = 1;
        }
    }
    if (sorted && have) {
        os[m] = cs;
        oe[m] = ce;
        m++;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    if (!sorted) {
        Py_DECREF(so);
        Py_DECREF(eo);
        Py_RETURN_NONE;
    }
    if (PyByteArray_Resize(so, m * 8) || PyByteArray_Resize(eo, m * 8)) {
        Py_DECREF(so);
        Py_DECREF(eo);
        return NULL;
    }
    return Py_BuildValue("(NN)", so, eo);
fail:
    Py_XDECREF(so);
    Py_XDECREF(eo);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    return NULL;
}

static PyMethodDef methods[] = {
    {"union_sorted", union_sorted, METH_VARARGS, "union_sorted(starts, ends) -> (starts, ends) or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_intervals", "Interval union in one pass.", -1, methods};

PyMODINIT_FUNC PyInit__intervals(void) { return PyModule_Create(&module); }
