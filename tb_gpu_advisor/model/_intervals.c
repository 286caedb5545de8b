/* Interval helpers in one pass each; intervals.py has NumPy versions of both.
 *
 * union_sorted(starts, ends) -> (starts, ends) as bytearrays of int64, or None when the non-empty
 * intervals are not sorted by start (the caller sorts them then). Empty intervals (end <= start) are
 * dropped; intervals that overlap or touch are merged (intervals.py's NumPy version makes about
 * nine passes).
 *
 * union_runs(starts, ends, bounds) -> the same for intervals made of runs each sorted by start
 * (starts[bounds[i]:bounds[i + 1]]: interval sets put together), merged as they are read, or None when
 * a run is not sorted or there are over 64 runs.
 *
 * search_sorted(a, v, right) -> bytearray of int64: np.searchsorted(a, v, "right" if right else
 * "left") for int64 `a` sorted. Each answer is searched for from the previous one, galloping, so
 * sorted `v` (event times) cost one merge-like pass instead of a binary search each.
 *
 * level_area(order, values, columns, t, floor, cap) -> (level, area) as bytearrays of float64, rows
 * of `columns`: the running sums of intervals' values at their sorted boundaries (intervals.py's
 * intervals.integral_in; `order` sorts the 2n boundaries, starts first then ends, `t` is the boundaries'
 * times in that order) and the integral of the sums up to each boundary, in one pass with the same
 * additions in the same order as the NumPy version (the results are equal to the bit).
 * level_area_at(..., at) -> the same rows at the boundary indices `at` only (ascending).
 *
 * Built by setup.py when a compiler is there; intervals.py works without it. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The union being written: intervals come in by start; the current one is written when one starts
 * past it (overlapping and touching ones merge), the last by merge_end. */
typedef struct {
    int64_t *os, *oe;
    Py_ssize_t m;
    int have;
    int64_t cs, ce;
} Merge;

static inline void merge_add(Merge *u, int64_t a, int64_t b) {
    if (u->have && a <= u->ce) {
        if (b > u->ce) u->ce = b;
        return;
    }
    if (u->have) {
        u->os[u->m] = u->cs;
        u->oe[u->m] = u->ce;
        u->m++;
    }
    u->cs = a;
    u->ce = b;
    u->have = 1;
}

static inline void merge_end(Merge *u) {
    if (u->have) {
        u->os[u->m] = u->cs;
        u->oe[u->m] = u->ce;
        u->m++;
    }
}

/* (so, eo) cut to the union's length; None when the input was not sorted. Takes so and eo. */
static PyObject *merge_result(PyObject *so, PyObject *eo, const Merge *u, int sorted) {
    PyObject *result = NULL;
    if (!sorted) {
        result = Py_None;
        Py_INCREF(result);
    } else if (!PyByteArray_Resize(so, u->m * 8) && !PyByteArray_Resize(eo, u->m * 8)) {
        result = Py_BuildValue("(OO)", so, eo);
    }
    Py_DECREF(so);
    Py_DECREF(eo);
    return result;
}

static PyObject *union_sorted(PyObject *self, PyObject *args) {
    Py_buffer sb, eb;
    if (!PyArg_ParseTuple(args, "y*y*", &sb, &eb)) return NULL;
    PyObject *so = NULL, *eo = NULL, *result = NULL;
    if (sb.len != eb.len || sb.len % 8) {
        PyErr_SetString(PyExc_ValueError, "union_sorted: two int64 buffers of one length");
        goto done;
    }
    Py_ssize_t n = sb.len / 8;
    if (!(so = PyByteArray_FromStringAndSize(NULL, sb.len)) || !(eo = PyByteArray_FromStringAndSize(NULL, sb.len)))
        goto done;
    const int64_t *s = sb.buf, *e = eb.buf;
    Merge u = {(int64_t *)PyByteArray_AS_STRING(so), (int64_t *)PyByteArray_AS_STRING(eo), 0, 0, 0, 0};
    int sorted = 1;
    int64_t prev = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        if (e[i] <= s[i]) continue;
        if (u.have && s[i] < prev) {
            sorted = 0;
            break;
        }
        prev = s[i];
        merge_add(&u, s[i], e[i]);
    }
    if (sorted) merge_end(&u);
    Py_END_ALLOW_THREADS
    result = merge_result(so, eo, &u, sorted);
    so = eo = NULL;
done:
    Py_XDECREF(so);
    Py_XDECREF(eo);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    return result;
}

#define MAX_RUNS 64

static PyObject *union_runs(PyObject *self, PyObject *args) {
    Py_buffer sb, eb, bb;
    if (!PyArg_ParseTuple(args, "y*y*y*", &sb, &eb, &bb)) return NULL;
    PyObject *so = NULL, *eo = NULL, *result = NULL;
    Py_ssize_t n = sb.len / 8, k = bb.len / 8 - 1;
    const int64_t *s = sb.buf, *e = eb.buf, *bounds = bb.buf;
    if (sb.len != eb.len || sb.len % 8 || bb.len % 8 || k < 1 || bounds[0] != 0 || bounds[k] != n) {
        PyErr_SetString(PyExc_ValueError, "union_runs: int64 starts, ends and run bounds from 0 to their length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < k; i++)
        if (bounds[i + 1] < bounds[i]) {
            PyErr_SetString(PyExc_ValueError, "union_runs: run bounds out of order");
            goto done;
        }
    if (k > MAX_RUNS) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    if (!(so = PyByteArray_FromStringAndSize(NULL, sb.len)) || !(eo = PyByteArray_FromStringAndSize(NULL, sb.len)))
        goto done;
    Merge u = {(int64_t *)PyByteArray_AS_STRING(so), (int64_t *)PyByteArray_AS_STRING(eo), 0, 0, 0, 0};
    Py_ssize_t pos[MAX_RUNS], active[MAX_RUNS], na = 0;
    int64_t last[MAX_RUNS];
    int started[MAX_RUNS] = {0};
    int sorted = 1;
    Py_BEGIN_ALLOW_THREADS
    /* the runs not yet read to their end, each at its next non-empty interval (empty ones dropped); an
     * exhausted run leaves the list, so each step compares only the runs left (the order in which
     * equal starts are taken does not change the union) */
    for (Py_ssize_t i = 0; i < k; i++) {
        pos[i] = bounds[i];
        while (pos[i] < bounds[i + 1] && e[pos[i]] <= s[pos[i]]) pos[i]++;
        if (pos[i] < bounds[i + 1]) active[na++] = i;
    }
    while (na > 0) {
        Py_ssize_t at = 0, best = active[0];
        for (Py_ssize_t t = 1; t < na; t++)
            if (s[pos[active[t]]] < s[pos[best]]) best = active[at = t];
        int64_t a = s[pos[best]], b = e[pos[best]];
        if (started[best] && a < last[best]) {
            sorted = 0;
            break;
        }
        started[best] = 1;
        last[best] = a;
        pos[best]++;
        while (pos[best] < bounds[best + 1] && e[pos[best]] <= s[pos[best]]) pos[best]++;
        if (pos[best] == bounds[best + 1]) active[at] = active[--na];
        merge_add(&u, a, b);
    }
    if (sorted) merge_end(&u);
    Py_END_ALLOW_THREADS
    result = merge_result(so, eo, &u, sorted);
    so = eo = NULL;
done:
    Py_XDECREF(so);
    Py_XDECREF(eo);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&eb);
    PyBuffer_Release(&bb);
    return result;
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

static PyObject *level_area(PyObject *self, PyObject *args) {
    Py_buffer ob, vb, tb, fb;
    Py_ssize_t c;
    double cap;
    int capped;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*pd", &ob, &vb, &c, &tb, &fb, &capped, &cap)) return NULL;
    PyObject *lo = NULL, *ao = NULL, *result = NULL;
    Py_ssize_t m = ob.len / 8, n = m / 2;
    if (c < 1 || c > 8 || ob.len % 8 || m % 2 || vb.len != n * c * 8 || tb.len != ob.len || fb.len != c * 8) {
        PyErr_SetString(PyExc_ValueError, "level_area: 2n int64 order and times, n x columns float64 values");
        goto done;
    }
    if (!(lo = PyByteArray_FromStringAndSize(NULL, m * c * 8)) || !(ao = PyByteArray_FromStringAndSize(NULL, m * c * 8)))
        goto done;
    const int64_t *order = ob.buf, *t = tb.buf;
    const double *v = vb.buf, *floor_ = fb.buf;
    double *level = (double *)PyByteArray_AS_STRING(lo), *area = (double *)PyByteArray_AS_STRING(ao);
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    double run[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (Py_ssize_t j = 0; j < m && !bad; j++) {
        int64_t k = order[j];
        if (k < 0 || k >= m) {
            bad = 1;
            break;
        }
        const double *x = v + (k < n ? k : k - n) * c;
        for (Py_ssize_t q = 0; q < c; q++) {
            run[q] += k < n ? x[q] : -x[q];
            double y = run[q] < floor_[q] ? 0.0 : run[q];
            level[j * c + q] = capped && y > cap ? cap : y;
            area[j * c + q] = j ? area[(j - 1) * c + q] + level[(j - 1) * c + q] * (double)(t[j] - t[j - 1]) : 0.0;
        }
    }
    Py_END_ALLOW_THREADS
    if (bad) PyErr_SetString(PyExc_ValueError, "level_area: an order index out of range");
    else result = Py_BuildValue("(OO)", lo, ao);
done:
    Py_XDECREF(lo);
    Py_XDECREF(ao);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&fb);
    return result;
}

/* level_area_at(order, values, columns, t, floor, capped, cap, at): level_area's rows at `at` only
 * (int64 boundary indices, ascending, repeats allowed), from the same additions in the same order:
 * the 2n rows of the sums (two columns over a GPU's kernels: 37 MB on the 265 MB benchmark file)
 * are not kept. */
static PyObject *level_area_at(PyObject *self, PyObject *args) {
    Py_buffer ob, vb, tb, fb, ab;
    Py_ssize_t c;
    double cap;
    int capped;
    if (!PyArg_ParseTuple(args, "y*y*ny*y*pdy*", &ob, &vb, &c, &tb, &fb, &capped, &cap, &ab)) return NULL;
    PyObject *lo = NULL, *ao = NULL, *result = NULL;
    Py_ssize_t m = ob.len / 8, n = m / 2, r = ab.len / 8;
    if (c < 1 || c > 8 || ob.len % 8 || m % 2 || vb.len != n * c * 8 || tb.len != ob.len || fb.len != c * 8 ||
        ab.len % 8) {
        PyErr_SetString(PyExc_ValueError, "level_area_at: level_area's arguments, then int64 rows");
        goto done;
    }
    if (!(lo = PyByteArray_FromStringAndSize(NULL, r * c * 8)) || !(ao = PyByteArray_FromStringAndSize(NULL, r * c * 8)))
        goto done;
    const int64_t *order = ob.buf, *t = tb.buf, *at = ab.buf;
    const double *v = vb.buf, *floor_ = fb.buf;
    double *level_out = (double *)PyByteArray_AS_STRING(lo), *area_out = (double *)PyByteArray_AS_STRING(ao);
    int bad = 0;
    Py_ssize_t p = 0;
    Py_BEGIN_ALLOW_THREADS
    double run[8] = {0, 0, 0, 0, 0, 0, 0, 0}, level[8] = {0, 0, 0, 0, 0, 0, 0, 0}, area[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (Py_ssize_t j = 0; j < m && p < r && !bad; j++) {
        int64_t k = order[j];
        if (k < 0 || k >= m || at[p] < j) {
            bad = 1;
            break;
        }
        const double *x = v + (k < n ? k : k - n) * c;
        for (Py_ssize_t q = 0; q < c; q++) {
            run[q] += k < n ? x[q] : -x[q];
            double y = run[q] < floor_[q] ? 0.0 : run[q];
            /* level_area's area[j] = area[j - 1] + level[j - 1] * (t[j] - t[j - 1]), then level[j] */
            area[q] = j ? area[q] + level[q] * (double)(t[j] - t[j - 1]) : 0.0;
            level[q] = capped && y > cap ? cap : y;
        }
        for (; p < r && at[p] == j; p++) {
            for (Py_ssize_t q = 0; q < c; q++) {
                level_out[p * c + q] = level[q];
                area_out[p * c + q] = area[q];
            }
        }
    }
    Py_END_ALLOW_THREADS
    if (bad || p < r) PyErr_SetString(PyExc_ValueError, "level_area_at: an index out of range or out of order");
    else result = Py_BuildValue("(OO)", lo, ao);
done:
    Py_XDECREF(lo);
    Py_XDECREF(ao);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&vb);
    PyBuffer_Release(&tb);
    PyBuffer_Release(&fb);
    PyBuffer_Release(&ab);
    return result;
}

static PyMethodDef methods[] = {
    {"level_area", level_area, METH_VARARGS, "level_area(order, values, columns, t, floor, capped, cap) -> (level, area)"},
    {"level_area_at", level_area_at, METH_VARARGS,
     "level_area_at(order, values, columns, t, floor, capped, cap, at) -> (level, area) at rows `at`"},
    {"union_sorted", union_sorted, METH_VARARGS, "union_sorted(starts, ends) -> (starts, ends) or None"},
    {"union_runs", union_runs, METH_VARARGS, "union_runs(starts, ends, bounds) -> (starts, ends) or None"},
    {"search_sorted", search_sorted, METH_VARARGS, "search_sorted(a, v, right) -> int64 positions"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_intervals", "Interval union and sorted search in one pass.", -1, methods};

PyMODINIT_FUNC PyInit__intervals(void) { return PyModule_Create(&module); }
