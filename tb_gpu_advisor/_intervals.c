/* Interval helpers in one pass each; intervals.py has NumPy versions of both.
 *
 * union_sorted(starts, ends) -> (starts, ends) as bytearrays of int64, or None when the non-empty
 * intervals are not sorted by start (the caller sorts them then). Empty intervals (end <= start) are
 * dropped; intervals that overlap or touch are merged (intervals.py's NumPy version makes about
 * nine passes).
 *
 * search_sorted(a, v, right) -> bytearray of int64: np.searchsorted(a, v, "right" if right else
 * "left") for int64 `a` sorted. Each answer is searched for from the previous one, galloping, so
 * sorted `v` (event times) cost one merge-like pass instead of a binary search each.
 *
 * Built by setup.py when a compiler is there; intervals.py works without it. */
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

/* The first j in [0, n] where a[j] < x (a[j] <= x when right) is false, searched from `hint`. */
static inline Py_ssize_t gallop(const int64_t *a, Py_ssize_t n, int64_t x, int right, Py_ssize_t hint) {
#define BEFORE(j) (right ? a[j] <= x : a[j] < x)
    Py_ssize_t lo, hi, step = 1;
    if (hint < n && BEFORE(hint)) { /* the answer lies after hint */
        lo = hint + 1;
        Py_ssize_t p = lo;
        while (p < n && BEFORE(p)) {
            lo = p + 1;
            step <<= 1;
            p = lo + step - 1;
        }
        hi = p < n ? p : n;
    } else { /* at or before hint */
        hi = hint;
        Py_ssize_t p = hi - 1;
        while (p >= 0 && !BEFORE(p)) {
            hi = p;
            step <<= 1;
            p = hi - step;
        }
        lo = p + 1 > 0 ? p + 1 : 0;
    }
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (BEFORE(mid)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
#undef BEFORE
}

static PyObject *search_sorted(PyObject *self, PyObject *args) {
    Py_buffer ab, vb;
    int right;
    if (!PyArg_ParseTuple(args, "y*y*p", &ab, &vb, &right)) return NULL;
    PyObject *out = NULL;
    if (ab.len % 8 || vb.len % 8) {
        PyErr_SetString(PyExc_ValueError, "search_sorted: int64 buffers");
    } else if ((out = PyByteArray_FromStringAndSize(NULL, vb.len))) {
        const int64_t *a = ab.buf, *v = vb.buf;
        int64_t *o = (int64_t *)PyByteArray_AS_STRING(out);
        Py_ssize_t n = ab.len / 8, m = vb.len / 8, at = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < m; i++) o[i] = at = gallop(a, n, v[i], right, at);
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&ab);
    PyBuffer_Release(&vb);
    return out;
}

static PyMethodDef methods[] = {
    {"union_sorted", union_sorted, METH_VARARGS, "union_sorted(starts, ends) -> (starts, ends) or None"},
    {"search_sorted", search_sorted, METH_VARARGS, "search_sorted(a, v, right) -> int64 positions"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_intervals", "Interval union and sorted search in one pass.", -1, methods};

PyMODINIT_FUNC PyInit__intervals(void) { return PyModule_Create(&module); }
