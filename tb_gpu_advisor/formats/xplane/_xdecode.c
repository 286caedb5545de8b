/* A wire-format scanner for XSpace profiles: fills columns straight from the file's bytes.
 *
 * decode(buffer, wanted_stat_names) -> (planes, hostnames, errors, warnings, strings)
 *   planes: [(id, name, {stat_id: stat_name}, [(md_id, name, display_name, [(stat_id, kind, value)])],
 *             [(stat_id, kind, value)], [line, ...])]
 *   line:   (id, name, display_name, timestamp_ns, n_events, mid, off, dur, {wanted_index: (kind, val)})
 *           mid/off/dur/val are bytearrays of int64, kind a bytearray of int8 (see raw.py: K_*).
 *   strings: the distinct string and bytes values of wanted event stats (ids in `val` index it).
 * decode(buffer, wanted_stat_names, lazy=True) leaves each line's events undecoded: the line's last
 *   four items are None, None, None, (start, end), its body's byte range, for decode_line, which
 *   decodes them (without the GIL while it scans) into a table made by strings_table(list).
 *
 * It accepts and rejects what protobuf's own parser does for these messages (raw.py's fallback is
 * the reference; the tests compare both on every profile they make, broken ones included): fields of
 * an unexpected wire type are unknown fields, unknown fields and groups are skipped, a oneof and a
 * repeated-once scalar keep the last value, map entries keep the last key, string fields must be
 * UTF-8; a truncated or corrupt message is an error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum { K_NONE = 0, K_INT = 1, K_UINT = 2, K_DOUBLE = 3, K_STR = 4, K_REF = 5 };
#define MAX_DEPTH 64

typedef struct {
    const uint8_t *p;
    const uint8_t *end;
} Cur;

typedef struct {
    const uint8_t *base;
    const char *error; /* static message */
    Py_ssize_t error_at;
    int nomem; /* out of memory while the GIL was released */
} Ctx;

static int fail(Ctx *c, const uint8_t *at, const char *msg) {
    if (!c->error) {
        c->error = msg;
        c->error_at = at ? (Py_ssize_t)(at - c->base) : -1;
    }
    return -1;
}

static inline int varint(Ctx *c, Cur *u, uint64_t *out) {
    if (u->p < u->end && *u->p < 0x80) { /* most varints here are one byte: field keys, small ids */
        *out = *u->p++;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (u->p >= u->end) return fail(c, u->p, "Wire format was corrupt (truncated varint)");
        uint8_t b = *u->p++;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return fail(c, u->p, "Wire format was corrupt (varint over 10 bytes)");
}

/* Read a field key: 0 and sets field and wire, or -1. */
static inline int key(Ctx *c, Cur *u, uint32_t *field, int *wire) {
    uint64_t k;
    if (varint(c, u, &k)) return -1;
    uint64_t f = k >> 3;
    *wire = (int)(k & 7);
    if (f == 0 || f > 536870911u) return fail(c, u->p, "Wire format was corrupt (bad field number)");
    if (*wire == 6 || *wire == 7) return fail(c, u->p, "Wire format was corrupt (bad wire type)");
    *field = (uint32_t)f;
    return 0;
}

static inline int length_delimited(Ctx *c, Cur *u, Cur *out) {
    uint64_t n;
    if (varint(c, u, &n)) return -1;
    if (n > (uint64_t)(u->end - u->p)) return fail(c, u->p, "Wire format was corrupt (length beyond the end)");
    out->p = u->p;
    out->end = u->p + n;
    u->p += n;
    return 0;
}

static int skip(Ctx *c, Cur *u, uint32_t field, int wire, int depth) {
    uint64_t v;
    Cur sub;
    switch (wire) {
    case 0:
        return varint(c, u, &v);
    case 1:
        if (u->end - u->p < 8) return fail(c, u->p, "Wire format was corrupt (truncated fixed64)");
        u->p += 8;
        return 0;
    case 2:
        return length_delimited(c, u, &sub);
    case 5:
        if (u->end - u->p < 4) return fail(c, u->p, "Wire format was corrupt (truncated fixed32)");
        u->p += 4;
        return 0;
    case 3:
        if (depth >= MAX_DEPTH) return fail(c, u->p, "Wire format was corrupt (groups nested too deep)");
        for (;;) {
            uint32_t f;
            int w;
            if (u->p >= u->end) return fail(c, u->p, "Wire format was corrupt (unterminated group)");
            if (key(c, u, &f, &w)) return -1;
            if (w == 4) return f == field ? 0 : fail(c, u->p, "Wire format was corrupt (mismatched end group)");
            if (skip(c, u, f, w, depth + 1)) return -1;
        }
    default: /* 4: an end group with no start */
        return fail(c, u->p, "Wire format was corrupt (unexpected end group)");
    }
}

/* UTF-8 validation as protobuf does it for string fields (no surrogates, no overlongs, <= U+10FFFF). */
static int utf8_ok(const uint8_t *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        /* ASCII runs, eight bytes at a time */
        while (i + 8 <= n) {
            uint64_t word;
            memcpy(&word, s + i, 8);
            if (word & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        uint8_t b = s[i];
        if (b < 0x80) {
            i++;
            continue;
        }
        int len;
        uint32_t cp;
        if ((b & 0xe0) == 0xc0) {
            len = 2;
            cp = b & 0x1f;
        } else if ((b & 0xf0) == 0xe0) {
            len = 3;
            cp = b & 0x0f;
        } else if ((b & 0xf8) == 0xf0) {
            len = 4;
            cp = b & 0x07;
        } else {
            return 0;
        }
        if (i + len > n) return 0;
        for (int k = 1; k < len; k++) {
            uint8_t t = s[i + k];
            if ((t & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (t & 0x3f);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000)) return 0;
        if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
        i += len;
    }
    return 1;
}

static int string_field(Ctx *c, Cur *u, Cur *out) {
    if (length_delimited(c, u, out)) return -1;
    if (!utf8_ok(out->p, out->end - out->p)) return fail(c, out->p, "String field had bad UTF-8");
    return 0;
}

static PyObject *py_str(Cur s) { return PyUnicode_DecodeUTF8((const char *)s.p, s.end - s.p, "strict"); }

/* -- interned string values of event stats ------------------------------------------------------ */

typedef struct {
    uint64_t hash;
    const uint8_t *p;
    Py_ssize_t n;
    int64_t id;
} Slot;

typedef struct {
    Slot *slots;
    size_t cap, used;
    size_t flushed; /* ids below this are in `list`; the others point into the buffer being scanned */
    PyObject *list; /* the strings, in id order (bytes objects; raw.py decodes them) */
} Strings;

static uint64_t fnv(const uint8_t *p, Py_ssize_t n) {
    /* eight bytes per round, then the tail: a hash for a table, not for security */
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)n;
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 32);
}

/* Raw allocations (no GIL needed): the table grows while a line is scanned without the GIL. */
static int strings_grow(Strings *s) {
    size_t cap = s->cap ? s->cap * 2 : 1024;
    Slot *slots = PyMem_RawCalloc(cap, sizeof(Slot));
    if (!slots) return -1;
    for (size_t i = 0; i < s->cap; i++) {
        if (!s->slots[i].p) continue;
        size_t j = s->slots[i].hash & (cap - 1);
        while (slots[j].p) j = (j + 1) & (cap - 1);
        slots[j] = s->slots[i];
    }
    PyMem_RawFree(s->slots);
    s->slots = slots;
    s->cap = cap;
    return 0;
}

/* The id of a string in the table, or -1. */
static int64_t intern_find(const Strings *s, const uint8_t *p, Py_ssize_t n, uint64_t h) {
    if (!s->cap) return -1;
    size_t j = h & (s->cap - 1);
    while (s->slots[j].p) {
        const Slot *e = &s->slots[j];
        if (e->hash == h && e->n == n && memcmp(e->p, p, (size_t)n) == 0) return e->id;
        j = (j + 1) & (s->cap - 1);
    }
    return -1;
}

/* Add a string the table lacks, pointing into the buffer until `strings_flush`; needs no GIL.
 * -1 when out of memory. */
static int64_t intern_add(Strings *s, const uint8_t *p, Py_ssize_t n, uint64_t h) {
    if ((s->used + 1) * 2 > s->cap && strings_grow(s)) return -1;
    static const uint8_t empty = 0;
    size_t j = h & (s->cap - 1);
    while (s->slots[j].p) j = (j + 1) & (s->cap - 1);
    Slot *e = &s->slots[j];
    e->hash = h;
    e->p = n ? p : &empty; /* any non-NULL pointer marks the slot */
    e->n = n;
    e->id = (int64_t)s->used++;
    return e->id;
}

/* With the GIL: the strings added since the last flush into `list`, in id order, and their slots
 * pointed at the bytes objects (the buffer they were read from may go). */
static int strings_flush(Strings *s) {
    if (s->flushed == s->used) return 0;
    Slot **fresh = PyMem_RawCalloc(s->used - s->flushed, sizeof(Slot *));
    if (!fresh) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->slots[i].p && (size_t)s->slots[i].id >= s->flushed) fresh[s->slots[i].id - s->flushed] = &s->slots[i];
    int bad = 0;
    for (size_t k = 0; k < s->used - s->flushed && !bad; k++) {
        Slot *e = fresh[k];
        PyObject *b = PyBytes_FromStringAndSize((const char *)e->p, e->n);
        if (!b || PyList_Append(s->list, b)) bad = 1;
        else e->p = (const uint8_t *)PyBytes_AS_STRING(b); /* the list holds it */
        Py_XDECREF(b);
    }
    PyMem_RawFree(fresh);
    if (bad) return -1;
    s->flushed = s->used;
    return 0;
}

/* -- stats ---------------------------------------------------------------------------------------- */

typedef struct {
    int64_t metadata_id;
    int kind;
    uint64_t bits; /* int, uint, double bits, ref */
    Cur text;      /* str or bytes */
    int is_str;    /* str_value (validated) rather than bytes_value */
} Stat;

#if defined(__GNUC__)
__attribute__((always_inline)) /* once per stat of every event: no call */
#endif
static inline int parse_stat(Ctx *c, Cur u, Stat *st) {
    st->metadata_id = 0;
    st->kind = K_NONE;
    st->bits = 0;
    st->is_str = 0;
    /* The usual layout, a one-byte metadata id then one value, read straight; anything else (or more
     * after the value) by the general loop below. Up to an error both read the same bytes in the same
     * order, so they fail alike. */
    if (u.end - u.p >= 3 && u.p[0] == 0x08 && u.p[1] < 0x80) {
        Cur v = {u.p + 3, u.end};
        uint64_t x;
        switch (u.p[2]) {
        case 0x18: /* uint64_value */
        case 0x20: /* int64_value */
        case 0x38: /* ref_value */
            if (varint(c, &v, &x)) return -1;
            st->bits = x;
            st->kind = u.p[2] == 0x18 ? K_UINT : u.p[2] == 0x20 ? K_INT : K_REF;
            break;
        case 0x11: /* double_value */
            if (v.end - v.p < 8) return fail(c, v.p, "Wire format was corrupt (truncated fixed64)");
            memcpy(&st->bits, v.p, 8);
            v.p += 8;
            st->kind = K_DOUBLE;
            break;
        case 0x2a: /* str_value */
            if (string_field(c, &v, &st->text)) return -1;
            st->kind = K_STR;
            st->is_str = 1;
            break;
        case 0x32: /* bytes_value */
            if (length_delimited(c, &v, &st->text)) return -1;
            st->kind = K_STR;
            break;
        default:
            v.p = NULL;
        }
        if (v.p == v.end) {
            st->metadata_id = u.p[1];
            return 0;
        }
        st->kind = K_NONE;
        st->bits = 0;
        st->is_str = 0;
    }
    while (u.p < u.end) {
        uint32_t f;
        int w;
        uint64_t v;
        if (key(c, &u, &f, &w)) return -1;
        if (f == 1 && w == 0) {
            if (varint(c, &u, &v)) return -1;
            st->metadata_id = (int64_t)v;
        } else if (f == 2 && w == 1) {
            if (u.end - u.p < 8) return fail(c, u.p, "Wire format was corrupt (truncated fixed64)");
            memcpy(&st->bits, u.p, 8);
            u.p += 8;
            st->kind = K_DOUBLE;
        } else if ((f == 3 || f == 4 || f == 7) && w == 0) {
            if (varint(c, &u, &v)) return -1;
            st->bits = v;
            st->kind = f == 3 ? K_UINT : f == 4 ? K_INT : K_REF;
        } else if (f == 5 && w == 2) {
            if (string_field(c, &u, &st->text)) return -1;
            st->kind = K_STR;
            st->is_str = 1;
        } else if (f == 6 && w == 2) {
            if (length_delimited(c, &u, &st->text)) return -1;
            st->kind = K_STR;
            st->is_str = 0;
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

/* A stat as a Python (stat_id, kind, value) tuple; the value an int, a float, a str or bytes. */
static PyObject *stat_tuple(Stat *st) {
    PyObject *v;
    switch (st->kind) {
    case K_INT:
        v = PyLong_FromLongLong((long long)st->bits);
        break;
    case K_UINT:
    case K_REF:
        v = PyLong_FromUnsignedLongLong(st->bits);
        break;
    case K_DOUBLE: {
        double d;
        memcpy(&d, &st->bits, 8);
        v = PyFloat_FromDouble(d);
        break;
    }
    case K_STR:
        v = st->is_str ? py_str(st->text)
                       : PyBytes_FromStringAndSize((const char *)st->text.p, st->text.end - st->text.p);
        break;
    default:
        v = Py_None;
        Py_INCREF(v);
    }
    if (!v) return NULL;
    PyObject *t = Py_BuildValue("(LiN)", (long long)st->metadata_id, st->kind, v);
    return t;
}

/* -- planes --------------------------------------------------------------------------------------- */

typedef struct {
    int64_t *ids; /* stat metadata ids that are wanted, sorted */
    int *index;   /* their wanted index */
    Py_ssize_t n;
    int16_t *direct; /* when the ids are small: the wanted index of every id below direct_n, or -1 */
    int64_t direct_n;
} Wanted;

#define DIRECT_MAX 65536 /* stat ids are small, dense numbers in the profilers' files */

static inline int wanted_lookup(const Wanted *w, int64_t id) {
    if (w->direct) return id >= 0 && id < w->direct_n ? w->direct[id] : -1;
    Py_ssize_t lo = 0, hi = w->n;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (w->ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < w->n && w->ids[lo] == id ? w->index[lo] : -1;
}

typedef struct {
    int64_t *mid, *off, *dur;
    int8_t **kind;   /* per wanted index, NULL until seen */
    int64_t **val;
    PyObject **kind_obj, **val_obj;
} LineCols;

/* A column's memory, allocated without the GIL and handed to Python as it is (a buffer object that
 * frees it), so that it is neither zeroed twice nor copied. */
typedef struct {
    PyObject_HEAD void *data;
    Py_ssize_t size;
} RawBuf;

static void rawbuf_dealloc(RawBuf *self) {
    PyMem_RawFree(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int rawbuf_getbuffer(RawBuf *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data, self->size, 0, flags);
}

static PyBufferProcs rawbuf_as_buffer = {(getbufferproc)rawbuf_getbuffer, NULL};

static PyTypeObject RawBufType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tb_gpu_advisor.formats.xplane._xdecode.RawBuf",
    .tp_basicsize = sizeof(RawBuf),
    .tp_dealloc = (destructor)rawbuf_dealloc,
    .tp_as_buffer = &rawbuf_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A decoded column's bytes.",
};

/* The buffer object owning `*data` (set to NULL: it is the object's now); NULL on failure. */
static PyObject *rawbuf_adopt(void **data, Py_ssize_t size) {
    RawBuf *b = PyObject_New(RawBuf, &RawBufType);
    if (!b) return NULL;
    b->data = *data;
    b->size = size;
    *data = NULL;
    return (PyObject *)b;
}

/* Each event's description, numbered as first seen: its metadata id and the (kind, value) of the
 * wanted stats in `slot_of` (the reader decides what an event is once per description). Over `limit`
 * descriptions it gives up (`gave_up`), and the reader groups the columns itself. No GIL needed. */
#define MAX_SLOTS 32

typedef struct {
    const int8_t *slot_of; /* per wanted index: its slot in a description, or -1 */
    Py_ssize_t width;      /* 1 + 2 * slots */
    Py_ssize_t limit;
    int64_t cur[1 + 2 * MAX_SLOTS]; /* the event being read */
    int64_t *rows;                  /* `width` values per description */
    Py_ssize_t count;
    size_t cap; /* of `slots`, a power of two */
    int64_t *slots; /* open addressing: description number + 1, 0 when free */
    uint64_t *hashes;
    int32_t *ids; /* per event */
    int gave_up;
} Desc;

static uint64_t desc_hash(const int64_t *row, Py_ssize_t width) {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (Py_ssize_t j = 0; j < width; j++) {
        h = (h ^ (uint64_t)row[j]) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    return h;
}

/* The number of the current event's description; -1 when out of memory. */
static int desc_add(Desc *d) {
    uint64_t h = desc_hash(d->cur, d->width);
    if (d->cap) {
        size_t j = h & (d->cap - 1);
        for (; d->slots[j]; j = (j + 1) & (d->cap - 1)) {
            int64_t id = d->slots[j] - 1;
            if (d->hashes[j] == h && !memcmp(d->rows + id * d->width, d->cur, (size_t)d->width * 8)) return (int)id;
        }
    }
    if (d->count >= d->limit) {
        d->gave_up = 1;
        return 0;
    }
    if ((size_t)(d->count + 1) * 2 > d->cap) { /* grow the table and the rows */
        size_t cap = d->cap ? d->cap * 2 : 64;
        int64_t *slots = PyMem_RawCalloc(cap, sizeof(int64_t));
        uint64_t *hashes = PyMem_RawCalloc(cap, sizeof(uint64_t));
        int64_t *rows = PyMem_RawRealloc(d->rows, cap / 2 * (size_t)d->width * 8);
        if (!slots || !hashes || !rows) {
            PyMem_RawFree(slots);
            PyMem_RawFree(hashes);
            if (rows) d->rows = rows;
            return -1;
        }
        d->rows = rows;
        for (size_t j = 0; j < d->cap; j++) {
            if (!d->slots[j]) continue;
            size_t k = d->hashes[j] & (cap - 1);
            while (slots[k]) k = (k + 1) & (cap - 1);
            slots[k] = d->slots[j];
            hashes[k] = d->hashes[j];
        }
        PyMem_RawFree(d->slots);
        PyMem_RawFree(d->hashes);
        d->slots = slots;
        d->hashes = hashes;
        d->cap = cap;
    }
    size_t j = h & (d->cap - 1);
    while (d->slots[j]) j = (j + 1) & (d->cap - 1);
    memcpy(d->rows + d->count * d->width, d->cur, (size_t)d->width * 8);
    d->slots[j] = d->count + 1;
    d->hashes[j] = h;
    return (int)d->count++;
}

/* The events of a line into its columns, without the GIL: a stat's columns are raw allocations and
 * new strings wait in the table for strings_flush. */
static int scan_events(Ctx *c, Cur u, const Wanted *w, Strings *strings, LineCols *col, Py_ssize_t n, Desc *d) {
    Py_ssize_t i = 0;
    while (u.p < u.end) {
        uint32_t f;
        int wt;
        Cur ev;
        if (key(c, &u, &f, &wt)) return -1;
        if (!(f == 4 && wt == 2)) {
            if (skip(c, &u, f, wt, 0)) return -1;
            continue;
        }
        if (length_delimited(c, &u, &ev)) return -1;
        if (i >= n) return fail(c, u.p, "Wire format was corrupt (line changed while read)");
        int64_t e_mid = 0, e_off = 0, e_dur = 0;
        if (d) memset(d->cur, 0, (size_t)d->width * 8);
        while (ev.p < ev.end) {
            uint32_t g;
            int we;
            uint64_t v;
            Cur sc;
            switch (*ev.p) { /* the usual one-byte keys, as key() reads them */
            case 0x08:
            case 0x10:
            case 0x18:
            case 0x28:
            case 0x22:
                g = *ev.p >> 3;
                we = *ev.p & 7;
                ev.p++;
                break;
            default:
                if (key(c, &ev, &g, &we)) return -1;
            }
            if (g == 1 && we == 0) {
                if (varint(c, &ev, &v)) return -1;
                e_mid = (int64_t)v;
            } else if (g == 2 && we == 0) {
                if (varint(c, &ev, &v)) return -1;
                e_off = (int64_t)v;
            } else if (g == 5 && we == 0) { /* num_occurrences: the oneof's other member clears offset_ps */
                if (varint(c, &ev, &v)) return -1;
                e_off = 0;
            } else if (g == 3 && we == 0) {
                if (varint(c, &ev, &v)) return -1;
                e_dur = (int64_t)v;
            } else if (g == 4 && we == 2) {
                Stat st;
                if (length_delimited(c, &ev, &sc) || parse_stat(c, sc, &st)) return -1;
                if (st.kind == K_NONE) continue; /* no value: nothing to keep */
                int k = wanted_lookup(w, st.metadata_id);
                if (k < 0) continue;
                int slot = d ? d->slot_of[k] : -1;
                if (slot < 0 && !col->kind[k]) {
                    col->kind[k] = PyMem_RawCalloc((size_t)n + 1, 1);
                    col->val[k] = PyMem_RawCalloc((size_t)n + 1, 8);
                    if (!col->kind[k] || !col->val[k]) {
                        c->nomem = 1;
                        return -1;
                    }
                }
                int64_t val;
                if (st.kind == K_STR) {
                    Py_ssize_t len = st.text.end - st.text.p;
                    uint64_t h = fnv(st.text.p, len);
                    val = intern_find(strings, st.text.p, len, h);
                    if (val < 0 && (val = intern_add(strings, st.text.p, len, h)) < 0) {
                        c->nomem = 1;
                        return -1;
                    }
                } else {
                    val = (int64_t)st.bits;
                }
                if (slot >= 0) { /* a described stat lives in the description, not in a column */
                    d->cur[1 + 2 * slot] = st.kind;
                    d->cur[2 + 2 * slot] = val;
                } else {
                    col->kind[k][i] = (int8_t)st.kind;
                    col->val[k][i] = val;
                }
            } else if (skip(c, &ev, g, we, 0)) {
                return -1;
            }
        }
        col->mid[i] = e_mid;
        col->off[i] = e_off;
        col->dur[i] = e_dur;
        if (d && !d->gave_up) {
            d->cur[0] = e_mid;
            int id = desc_add(d);
            if (id < 0) {
                c->nomem = 1;
                return -1;
            }
            d->ids[i] = id;
        }
        i++;
    }
    return 0;
}

/* The events of a line body `u` holding `n` events: (mid, off, dur, {wanted_index: (kind, val)},
 * descriptions, their rows), the last two None without `d` or when it gave up. */
static PyObject *line_events(Ctx *c, Cur u, const Wanted *w, Py_ssize_t n_wanted, Strings *strings, Py_ssize_t n,
                             Desc *d) {
    PyObject *mid_o = NULL, *off_o = NULL, *dur_o = NULL, *stats = NULL, *result = NULL, *ids_o = NULL,
             *rows_o = NULL;
    LineCols col;
    memset(&col, 0, sizeof(col));
    if (d && !(d->ids = PyMem_RawMalloc((size_t)n * 4 + 4))) {
        PyErr_NoMemory();
        return NULL;
    }
    col.kind = PyMem_Calloc((size_t)n_wanted + 1, sizeof(int8_t *));
    col.val = PyMem_Calloc((size_t)n_wanted + 1, sizeof(int64_t *));
    col.kind_obj = PyMem_Calloc((size_t)n_wanted + 1, sizeof(PyObject *));
    col.val_obj = PyMem_Calloc((size_t)n_wanted + 1, sizeof(PyObject *));
    if (!col.kind || !col.val || !col.kind_obj || !col.val_obj) {
        PyErr_NoMemory();
        goto done;
    }
    col.mid = PyMem_RawCalloc((size_t)n + 1, 8);
    col.off = PyMem_RawCalloc((size_t)n + 1, 8);
    col.dur = PyMem_RawCalloc((size_t)n + 1, 8);
    if (!col.mid || !col.off || !col.dur) {
        PyErr_NoMemory();
        goto done;
    }
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = scan_events(c, u, w, strings, &col, n, d);
    if (!bad && d && d->gave_up) /* too many descriptions: every stat in columns after all */
        bad = scan_events(c, u, w, strings, &col, n, NULL);
    Py_END_ALLOW_THREADS
    if (strings_flush(strings)) goto done; /* also after a failure: the table must not point into the buffer */
    if (bad) {
        if (c->nomem && !PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    if (!(mid_o = rawbuf_adopt((void **)&col.mid, n * 8)) || !(off_o = rawbuf_adopt((void **)&col.off, n * 8)) ||
        !(dur_o = rawbuf_adopt((void **)&col.dur, n * 8)) || !(stats = PyDict_New()))
        goto done;
    for (Py_ssize_t k = 0; k < n_wanted; k++) {
        if (!col.kind[k]) continue;
        if (!(col.kind_obj[k] = rawbuf_adopt((void **)&col.kind[k], n)) ||
            !(col.val_obj[k] = rawbuf_adopt((void **)&col.val[k], n * 8)))
            goto done;
        PyObject *key_o = PyLong_FromSsize_t(k);
        PyObject *pair = Py_BuildValue("(OO)", col.kind_obj[k], col.val_obj[k]);
        int failed = !key_o || !pair || PyDict_SetItem(stats, key_o, pair);
        Py_XDECREF(key_o);
        Py_XDECREF(pair);
        if (failed) goto done;
    }
    if (d && !d->gave_up) {
        if (!(ids_o = rawbuf_adopt((void **)&d->ids, n * 4)) ||
            !(rows_o = rawbuf_adopt((void **)&d->rows, d->count * d->width * 8)))
            goto done;
    } else {
        ids_o = Py_None;
        rows_o = Py_None;
        Py_INCREF(ids_o);
        Py_INCREF(rows_o);
    }
    result = Py_BuildValue("(OOOOOO)", mid_o, off_o, dur_o, stats, ids_o, rows_o);
done:
    if (d) {
        PyMem_RawFree(d->ids);
        PyMem_RawFree(d->rows);
        PyMem_RawFree(d->slots);
        PyMem_RawFree(d->hashes);
        d->ids = NULL;
        d->rows = NULL;
        d->slots = NULL;
        d->hashes = NULL;
    }
    Py_XDECREF(ids_o);
    Py_XDECREF(rows_o);
    if (col.kind_obj)
        for (Py_ssize_t k = 0; k < n_wanted; k++) {
            Py_XDECREF(col.kind_obj[k]);
            Py_XDECREF(col.val_obj[k]);
            PyMem_RawFree(col.kind[k]);
            PyMem_RawFree(col.val[k]);
        }
    PyMem_RawFree(col.mid);
    PyMem_RawFree(col.off);
    PyMem_RawFree(col.dur);
    PyMem_Free(col.kind);
    PyMem_Free(col.val);
    PyMem_Free(col.kind_obj);
    PyMem_Free(col.val_obj);
    Py_XDECREF(mid_o);
    Py_XDECREF(off_o);
    Py_XDECREF(dur_o);
    Py_XDECREF(stats);
    return result;
}

/* A line: (id, name, display_name, timestamp_ns, n_events, mid, off, dur, stats). Lazy: its events
 * are left for decode_line, and (start, end), the byte range of its body, stands for the columns:
 * (id, name, display_name, timestamp_ns, n_events, None, None, None, (start, end)). */
static PyObject *parse_line(Ctx *c, Cur u, const Wanted *w, Py_ssize_t n_wanted, Strings *strings, int lazy) {
    int64_t id = 0, ts = 0;
    Cur name = {0, 0}, display = {0, 0};
    Py_ssize_t n = 0;
    Cur scan = u;
    /* first pass: the header and the number of events */
    while (scan.p < scan.end) {
        uint32_t f;
        int wt;
        uint64_t v;
        Cur sub;
        if (key(c, &scan, &f, &wt)) return NULL;
        if (f == 1 && wt == 0) {
            if (varint(c, &scan, &v)) return NULL;
            id = (int64_t)v;
        } else if (f == 3 && wt == 0) {
            if (varint(c, &scan, &v)) return NULL;
            ts = (int64_t)v;
        } else if (f == 2 && wt == 2) {
            if (string_field(c, &scan, &name)) return NULL;
        } else if (f == 11 && wt == 2) {
            if (string_field(c, &scan, &display)) return NULL;
        } else if (f == 4 && wt == 2) {
            if (length_delimited(c, &scan, &sub)) return NULL;
            n++;
        } else if (skip(c, &scan, f, wt, 0)) {
            return NULL;
        }
    }
    PyObject *events = lazy ? Py_BuildValue("(OOO(nn))", Py_None, Py_None, Py_None, (Py_ssize_t)(u.p - c->base),
                                            (Py_ssize_t)(u.end - c->base))
                            : line_events(c, u, w, n_wanted, strings, n, NULL);
    if (!events) return NULL;
    PyObject *name_o = name.p ? py_str(name) : PyUnicode_FromString("");
    PyObject *display_o = display.p ? py_str(display) : PyUnicode_FromString("");
    PyObject *result = NULL;
    if (name_o && display_o)
        result = Py_BuildValue("(LOOLnOOOO)", (long long)id, name_o, display_o, (long long)ts, n,
                               PyTuple_GET_ITEM(events, 0), PyTuple_GET_ITEM(events, 1), PyTuple_GET_ITEM(events, 2),
                               PyTuple_GET_ITEM(events, 3));
    Py_XDECREF(name_o);
    Py_XDECREF(display_o);
    Py_DECREF(events);
    return result;
}

/* Event metadata: (id, name, display_name, [stats]) merged over every occurrence of the map value. */
static int parse_event_metadata(Ctx *c, Cur u, Cur *name, Cur *display, PyObject *stats) {
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (f == 2 && w == 2) {
            if (string_field(c, &u, name)) return -1;
        } else if (f == 4 && w == 2) {
            if (string_field(c, &u, display)) return -1;
        } else if (f == 5 && w == 2) {
            Stat st;
            if (length_delimited(c, &u, &sub) || parse_stat(c, sub, &st)) return -1;
            PyObject *t = stat_tuple(&st);
            if (!t || PyList_Append(stats, t)) {
                Py_XDECREF(t);
                return -1;
            }
            Py_DECREF(t);
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

static int parse_stat_metadata(Ctx *c, Cur u, Cur *name) {
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (f == 2 && w == 2) {
            if (string_field(c, &u, name)) return -1;
        } else if (f == 3 && w == 2) {
            if (string_field(c, &u, &sub)) return -1; /* description: validated, not kept */
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

/* A map entry: its key (field 1) and its value's occurrences (field 2), each handed to `value`. */
typedef int (*EntryValue)(Ctx *c, Cur u, void *state);

static int map_entry(Ctx *c, Cur u, int64_t *key_out, Cur *values, Py_ssize_t *n_values, Py_ssize_t cap) {
    *key_out = 0;
    *n_values = 0;
    while (u.p < u.end) {
        uint32_t f;
        int w;
        uint64_t v;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (f == 1 && w == 0) {
            if (varint(c, &u, &v)) return -1;
            *key_out = (int64_t)v;
        } else if (f == 2 && w == 2) {
            if (length_delimited(c, &u, &sub)) return -1;
            if (*n_values < cap) values[(*n_values)++] = sub;
            else return fail(c, u.p, "Wire format was corrupt (map value repeated too often)");
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The wanted stats' ids on a plane ({stat_id: name}), sorted, with their index in `wanted_names`;
 * 0, or -1 with an exception set. The caller frees w->ids and w->index. */
static int wanted_init(Wanted *w, PyObject *stat_names, PyObject *wanted_names) {
    Py_ssize_t n = PyDict_GET_SIZE(stat_names), n_wanted = PyTuple_GET_SIZE(wanted_names), pos = 0, m = 0;
    PyObject *k, *v;
    w->ids = PyMem_Malloc(sizeof(int64_t) * (size_t)(n + 1));
    w->index = PyMem_Malloc(sizeof(int) * (size_t)(n + 1));
    int64_t *pairs = PyMem_Malloc(sizeof(int64_t) * 2 * (size_t)(n + 1));
    if (!w->ids || !w->index || !pairs) {
        PyMem_Free(pairs);
        PyErr_NoMemory();
        return -1;
    }
    while (PyDict_Next(stat_names, &pos, &k, &v)) {
        for (Py_ssize_t j = 0; j < n_wanted; j++) {
            int eq = PyUnicode_Compare(v, PyTuple_GET_ITEM(wanted_names, j));
            if (eq == 0) {
                pairs[2 * m] = PyLong_AsLongLong(k);
                pairs[2 * m + 1] = j;
                m++;
                break;
            }
        }
    }
    qsort(pairs, (size_t)m, 2 * sizeof(int64_t), cmp_i64);
    for (Py_ssize_t j = 0; j < m; j++) {
        w->ids[j] = pairs[2 * j];
        w->index[j] = (int)pairs[2 * j + 1];
    }
    w->n = m;
    PyMem_Free(pairs);
    w->direct = NULL;
    w->direct_n = 0;
    if (m && w->ids[0] >= 0 && w->ids[m - 1] < DIRECT_MAX) { /* a table instead of a binary search per stat */
        w->direct_n = w->ids[m - 1] + 1;
        if (!(w->direct = PyMem_Malloc(sizeof(int16_t) * (size_t)w->direct_n))) {
            PyErr_NoMemory();
            return -1;
        }
        for (int64_t i = 0; i < w->direct_n; i++) w->direct[i] = -1;
        for (Py_ssize_t j = 0; j < m; j++) w->direct[w->ids[j]] = (int16_t)w->index[j];
    }
    return 0;
}

#define MAX_MAP_VALUES 64

static PyObject *parse_plane(Ctx *c, Cur u, PyObject *wanted_names, Strings *strings, int lazy) {
    int64_t id = 0;
    Cur name = {0, 0};
    PyObject *stat_names = NULL, *event_meta = NULL, *plane_stats = NULL, *lines = NULL, *result = NULL;
    Wanted w = {NULL, NULL, 0, NULL, 0};
    Py_ssize_t n_wanted = PyTuple_GET_SIZE(wanted_names);
    Cur values[MAX_MAP_VALUES];
    Py_ssize_t n_values;
    if (!(stat_names = PyDict_New()) || !(event_meta = PyList_New(0)) || !(plane_stats = PyList_New(0)) ||
        !(lines = PyList_New(0)))
        goto done;
    /* first pass: everything but the lines (stat metadata comes after the lines on the wire) */
    Cur scan = u;
    while (scan.p < scan.end) {
        uint32_t f;
        int wt;
        uint64_t v;
        Cur sub;
        if (key(c, &scan, &f, &wt)) goto done;
        if (f == 1 && wt == 0) {
            if (varint(c, &scan, &v)) goto done;
            id = (int64_t)v;
        } else if (f == 2 && wt == 2) {
            if (string_field(c, &scan, &name)) goto done;
        } else if (f == 5 && wt == 2) {
            int64_t k;
            Cur sname = {0, 0};
            if (length_delimited(c, &scan, &sub) || map_entry(c, sub, &k, values, &n_values, MAX_MAP_VALUES)) goto done;
            for (Py_ssize_t j = 0; j < n_values; j++)
                if (parse_stat_metadata(c, values[j], &sname)) goto done;
            PyObject *ko = PyLong_FromLongLong((long long)k);
            PyObject *vo = sname.p ? py_str(sname) : PyUnicode_FromString("");
            int bad = !ko || !vo || PyDict_SetItem(stat_names, ko, vo);
            Py_XDECREF(ko);
            Py_XDECREF(vo);
            if (bad) goto done;
        } else if (f == 6 && wt == 2) {
            Stat st;
            if (length_delimited(c, &scan, &sub) || parse_stat(c, sub, &st)) goto done;
            PyObject *t = stat_tuple(&st);
            if (!t || PyList_Append(plane_stats, t)) {
                Py_XDECREF(t);
                goto done;
            }
            Py_DECREF(t);
        } else if (f == 4 && wt == 2) {
            int64_t k;
            Cur mname = {0, 0}, mdisplay = {0, 0};
            if (length_delimited(c, &scan, &sub) || map_entry(c, sub, &k, values, &n_values, MAX_MAP_VALUES)) goto done;
            PyObject *mstats = PyList_New(0);
            if (!mstats) goto done;
            for (Py_ssize_t j = 0; j < n_values; j++)
                if (parse_event_metadata(c, values[j], &mname, &mdisplay, mstats)) {
                    Py_DECREF(mstats);
                    goto done;
                }
            PyObject *no = mname.p ? py_str(mname) : PyUnicode_FromString("");
            PyObject *dob = mdisplay.p ? py_str(mdisplay) : PyUnicode_FromString("");
            PyObject *t = (no && dob) ? Py_BuildValue("(LOON)", (long long)k, no, dob, mstats) : NULL;
            Py_XDECREF(no);
            Py_XDECREF(dob);
            if (!t) {
                if (!no || !dob) Py_DECREF(mstats);
                goto done;
            }
            int bad = PyList_Append(event_meta, t);
            Py_DECREF(t);
            if (bad) goto done;
        } else if (f == 3 && wt == 2) {
            if (length_delimited(c, &scan, &sub)) goto done;
        } else if (skip(c, &scan, f, wt, 0)) {
            goto done;
        }
    }
    if (wanted_init(&w, stat_names, wanted_names)) goto done;
    /* second pass: the lines */
    scan = u;
    while (scan.p < scan.end) {
        uint32_t f;
        int wt;
        Cur sub;
        if (key(c, &scan, &f, &wt)) goto done;
        if (f == 3 && wt == 2) {
            if (length_delimited(c, &scan, &sub)) goto done;
            PyObject *line = parse_line(c, sub, &w, n_wanted, strings, lazy);
            if (!line || PyList_Append(lines, line)) {
                Py_XDECREF(line);
                goto done;
            }
            Py_DECREF(line);
        } else if (skip(c, &scan, f, wt, 0)) {
            goto done;
        }
    }
    {
        PyObject *name_o = name.p ? py_str(name) : PyUnicode_FromString("");
        if (name_o)
            result = Py_BuildValue("(LOOOOO)", (long long)id, name_o, stat_names, event_meta, plane_stats, lines);
        Py_XDECREF(name_o);
    }
done:
    PyMem_Free(w.ids);
    PyMem_Free(w.index);
    PyMem_Free(w.direct);
    Py_XDECREF(stat_names);
    Py_XDECREF(event_meta);
    Py_XDECREF(plane_stats);
    Py_XDECREF(lines);
    return result;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer buf;
    PyObject *wanted;
    int lazy = 0;
    if (!PyArg_ParseTuple(args, "y*O!|p", &buf, &PyTuple_Type, &wanted, &lazy)) return NULL;
    Ctx c = {(const uint8_t *)buf.buf, NULL, -1, 0};
    Cur u = {(const uint8_t *)buf.buf, (const uint8_t *)buf.buf + buf.len};
    Strings strings = {NULL, 0, 0, 0, NULL};
    PyObject *planes = PyList_New(0), *hostnames = PyList_New(0), *errors = PyList_New(0),
             *warnings = PyList_New(0), *result = NULL;
    strings.list = PyList_New(0);
    if (!planes || !hostnames || !errors || !warnings || !strings.list) goto done;
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(&c, &u, &f, &w)) goto done;
        if (f == 1 && w == 2) {
            if (length_delimited(&c, &u, &sub)) goto done;
            PyObject *p = parse_plane(&c, sub, wanted, &strings, lazy);
            if (!p || PyList_Append(planes, p)) {
                Py_XDECREF(p);
                goto done;
            }
            Py_DECREF(p);
        } else if ((f == 2 || f == 3 || f == 4) && w == 2) {
            if (string_field(&c, &u, &sub)) goto done;
            PyObject *s = py_str(sub);
            PyObject *into = f == 2 ? errors : f == 3 ? warnings : hostnames;
            if (!s || PyList_Append(into, s)) {
                Py_XDECREF(s);
                goto done;
            }
            Py_DECREF(s);
        } else if (skip(&c, &u, f, w, 0)) {
            goto done;
        }
    }
    result = Py_BuildValue("(OOOOO)", planes, hostnames, errors, warnings, strings.list);
done:
    if (c.error && !PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "%s at byte %zd", c.error, c.error_at);
    PyMem_RawFree(strings.slots);
    Py_XDECREF(strings.list);
    Py_XDECREF(planes);
    Py_XDECREF(hostnames);
    Py_XDECREF(errors);
    Py_XDECREF(warnings);
    PyBuffer_Release(&buf);
    return result;
}

/* -- what a file holds, counted before anything is built (census) ----------------------------------- */

/* What reading a file costs is in what it holds: events, lines, event metadata (the header builds an
 * object per entry: 15M entries in 429 MB cost 7.2 GB), strings. Counted without building anything,
 * and without the GIL, so that a file is refused from these counts before its header is decoded. A
 * corrupt message ends the count where it breaks (decoding it reports the error). */
typedef struct {
    uint64_t planes, lines, events, metadata, metadata_stats, stat_metadata, plane_stats, strings, string_bytes;
} Census;

static void census_string(Census *n, Cur s) {
    n->strings++;
    n->string_bytes += (uint64_t)(s.end - s.p);
}

/* An event or stat metadata map entry: its value's name and display name, its stats. */
static int census_entry(Ctx *c, Cur u, Census *n, int event) {
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (f == 2 && w == 2) {
            if (length_delimited(c, &u, &sub)) return -1;
            while (sub.p < sub.end) {
                uint32_t g;
                int x;
                Cur s;
                if (key(c, &sub, &g, &x)) return -1;
                if (x == 2 && (g == 2 || (event && g == 4))) {
                    if (length_delimited(c, &sub, &s)) return -1;
                    census_string(n, s);
                } else if (event && g == 5 && x == 2) {
                    if (length_delimited(c, &sub, &s)) return -1;
                    n->metadata_stats++;
                } else if (skip(c, &sub, g, x, 0)) {
                    return -1;
                }
            }
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

static int census_line(Ctx *c, Cur u, Census *n) {
    n->lines++;
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (w == 2 && f == 4) {
            if (length_delimited(c, &u, &sub)) return -1;
            n->events++;
        } else if (w == 2 && (f == 2 || f == 11)) {
            if (length_delimited(c, &u, &sub)) return -1;
            census_string(n, sub);
        } else if (skip(c, &u, f, w, 0)) {
            return -1;
        }
    }
    return 0;
}

static int census_plane(Ctx *c, Cur u, Census *n) {
    n->planes++;
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(c, &u, &f, &w)) return -1;
        if (w != 2) {
            if (skip(c, &u, f, w, 0)) return -1;
            continue;
        }
        if (length_delimited(c, &u, &sub)) return -1;
        if (f == 2) {
            census_string(n, sub);
        } else if (f == 3) {
            if (census_line(c, sub, n)) return -1;
        } else if (f == 4) {
            n->metadata++;
            if (census_entry(c, sub, n, 1)) return -1;
        } else if (f == 5) {
            n->stat_metadata++;
            if (census_entry(c, sub, n, 0)) return -1;
        } else if (f == 6) {
            n->plane_stats++;
        }
    }
    return 0;
}

static PyObject *census(PyObject *self, PyObject *args) {
    Py_buffer buf;
    if (!PyArg_ParseTuple(args, "y*", &buf)) return NULL;
    Ctx c = {(const uint8_t *)buf.buf, NULL, -1, 0};
    Cur u = {(const uint8_t *)buf.buf, (const uint8_t *)buf.buf + buf.len};
    Census n;
    memset(&n, 0, sizeof n);
    Py_BEGIN_ALLOW_THREADS
    while (u.p < u.end) {
        uint32_t f;
        int w;
        Cur sub;
        if (key(&c, &u, &f, &w)) break;
        if (w != 2) {
            if (skip(&c, &u, f, w, 0)) break;
            continue;
        }
        if (length_delimited(&c, &u, &sub)) break;
        if (f == 1) {
            if (census_plane(&c, sub, &n)) break;
        } else if (f == 2 || f == 3 || f == 4) {
            census_string(&n, sub);
        }
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return Py_BuildValue("{sKsKsKsKsKsKsKsKsK}", "planes", (unsigned long long)n.planes, "lines",
                         (unsigned long long)n.lines, "events", (unsigned long long)n.events, "metadata",
                         (unsigned long long)n.metadata, "metadata_stats", (unsigned long long)n.metadata_stats,
                         "stat_metadata", (unsigned long long)n.stat_metadata, "plane_stats",
                         (unsigned long long)n.plane_stats, "strings", (unsigned long long)n.strings,
                         "string_bytes", (unsigned long long)n.string_bytes);
}

/* -- lines decoded one at a time (lazy decode) ------------------------------------------------------ */

#define STRINGS_CAPSULE "tb_gpu_advisor._xdecode.strings"

static void strings_free(PyObject *capsule) {
    Strings *s = PyCapsule_GetPointer(capsule, STRINGS_CAPSULE);
    if (!s) return;
    PyMem_RawFree(s->slots);
    Py_XDECREF(s->list);
    PyMem_Free(s);
}

/* strings_table(list) -> a table interning string values into `list` across decode_line calls. */
static PyObject *strings_table(PyObject *self, PyObject *args) {
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &list)) return NULL;
    Strings *s = PyMem_Calloc(1, sizeof(Strings));
    if (!s) return PyErr_NoMemory();
    Py_INCREF(list);
    s->list = list;
    PyObject *capsule = PyCapsule_New(s, STRINGS_CAPSULE, strings_free);
    if (!capsule) {
        Py_DECREF(list);
        PyMem_Free(s);
    }
    return capsule;
}

/* decode_line(buffer, start, end, n_events, stat_names, wanted_stat_names, strings_table, described=(),
 *             limit=65536)
 *   -> (mid, off, dur, {wanted_index: (kind, val)}, descriptions, rows) for the line body at
 *   buffer[start:end] of the plane whose stat metadata is `stat_names` ({id: name}), as the eager
 *   decode gives them; the scan runs without the GIL. With `described` (wanted indices), each event's
 *   description (int32, numbered as first seen) and the rows of the descriptions (int64: metadata id,
 *   then kind and value of each described stat), and the described stats get no columns; over `limit`
 *   descriptions, None twice and every stat in columns. */
static PyObject *decode_line(PyObject *self, PyObject *args) {
    Py_buffer buf;
    Py_ssize_t start, end, n, limit = 65536;
    PyObject *stat_names, *wanted, *capsule, *described = NULL, *result = NULL;
    if (!PyArg_ParseTuple(args, "y*nnnO!O!O|O!n", &buf, &start, &end, &n, &PyDict_Type, &stat_names, &PyTuple_Type,
                          &wanted, &capsule, &PyTuple_Type, &described, &limit))
        return NULL;
    Strings *strings = PyCapsule_GetPointer(capsule, STRINGS_CAPSULE);
    Wanted w = {NULL, NULL, 0, NULL, 0};
    Py_ssize_t n_wanted = PyTuple_GET_SIZE(wanted);
    int8_t *slot_of = NULL;
    Desc *d = NULL;
    if (!strings) goto done;
    if (start < 0 || end < start || end > buf.len || n < 0 || limit < 1) {
        PyErr_SetString(PyExc_ValueError, "decode_line: bad arguments");
        goto done;
    }
    if (described && PyTuple_GET_SIZE(described)) {
        Py_ssize_t slots = PyTuple_GET_SIZE(described);
        if (slots > MAX_SLOTS || n_wanted > 127) {
            PyErr_SetString(PyExc_ValueError, "decode_line: too many described stats");
            goto done;
        }
        if (!(slot_of = PyMem_Malloc((size_t)n_wanted + 1)) || !(d = PyMem_Calloc(1, sizeof(Desc)))) {
            PyErr_NoMemory();
            goto done;
        }
        memset(slot_of, -1, (size_t)n_wanted + 1);
        for (Py_ssize_t j = 0; j < slots; j++) {
            Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(described, j));
            if (k < 0 || k >= n_wanted) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "decode_line: a described stat is not wanted");
                goto done;
            }
            slot_of[k] = (int8_t)j;
        }
        d->slot_of = slot_of;
        d->width = 1 + 2 * slots;
        d->limit = limit;
    }
    if (wanted_init(&w, stat_names, wanted)) goto done;
    Ctx c = {(const uint8_t *)buf.buf, NULL, -1, 0};
    Cur u = {(const uint8_t *)buf.buf + start, (const uint8_t *)buf.buf + end};
    result = line_events(&c, u, &w, n_wanted, strings, n, d);
    if (c.error && !PyErr_Occurred()) {
        Py_XDECREF(result);
        result = NULL;
        PyErr_Format(PyExc_ValueError, "%s at byte %zd", c.error, c.error_at);
    }
done:
    PyMem_Free(w.ids);
    PyMem_Free(w.index);
    PyMem_Free(w.direct);
    PyMem_Free(slot_of);
    PyMem_Free(d);
    PyBuffer_Release(&buf);
    return result;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(buffer, wanted_stat_names, lazy=False) -> (planes, hostnames, errors, warnings, strings)"},
    {"strings_table", strings_table, METH_VARARGS, "strings_table(list) -> a string table for decode_line"},
    {"census", census, METH_VARARGS,
     "census(buffer) -> {planes, lines, events, metadata, metadata_stats, stat_metadata, plane_stats, strings, "
     "string_bytes}: what the file holds, counted without building it"},
    {"decode_line", decode_line, METH_VARARGS,
     "decode_line(buffer, start, end, n_events, stat_names, wanted_stat_names, table, described=(), limit=65536) "
     "-> (mid, off, dur, stats, descriptions, rows)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_xdecode", "XSpace wire-format scanner.", -1, methods};

PyMODINIT_FUNC PyInit__xdecode(void) {
    if (PyType_Ready(&RawBufType) < 0) return NULL;
    return PyModule_Create(&module);
}
