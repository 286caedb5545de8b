/* A streaming tokenizer for PyTorch (Kineto) JSON traces: fills the columns the Kineto reader (formats/kineto/) needs
 * straight from the text, fed in pieces, without building a Python object per event.
 *
 * Parser().feed(buffer, start, soft_end, final) -> position reached (whole units only: a top-level
 *   member, or one event; a unit cut by the buffer's end is left for the next feed, which gets the
 *   rest of the text appended), or -1 when the file needs the Python reader (see below).
 * Parser().finish() -> dict of columns (bytes of fixed-width values), the interned texts and the
 *   top-level members the reader reads (their JSON text).
 *
 * Every string and every list or object value kept is interned as its JSON text (quotes and escapes
 * included): Python decodes each distinct one with orjson, so names mean exactly what the Python
 * reader makes of them. Anything this does not mirror exactly gives up (-1, `fallback` says why) and
 * the reader reads the file in Python instead: invalid JSON (orjson's own message is the error),
 * an event that is not an object, a tracked field of an unexpected type, a key given twice, escapes
 * in keys, integers over 18 digits, numbers that overflow, lone surrogates, deep nesting.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* value tags (tokens.py mirrors these) */
enum { T_ABSENT = 0, T_INT = 1, T_FLOAT = 2, T_STR = 3, T_TRUE = 4, T_FALSE = 5, T_NULL = 6, T_RAW = 7 };
/* event kinds kept */
enum { PH_X = 1, PH_M = 2, PH_I = 3 };
/* args keys kept (ARG_KEYS order; tokens.py names them) */
static const char *ARG_KEYS[] = {"device",
                                 "stream",
                                 "correlation",
                                 "External id",
                                 "external id",
                                 "bytes",
                                 "registers per thread",
                                 "shared memory",
                                 "est. achieved occupancy %",
                                 "grid",
                                 "block",
                                 "Input type",
                                 "Input Dims",
                                 "Input dims",
                                 "name",
                                 "Device Type",
                                 "Device Id",
                                 "Bytes",
                                 "Total Allocated",
                                 "Total Reserved",
                                 "Call stack",
                                 "blocks per SM",
                                 "Concrete Inputs",
                                 NULL};
#define N_ARG_KEYS 23
static size_t ARG_LENS[N_ARG_KEYS];
#define MAX_DEPTH 200

enum { OK = 0, MORE = 1, BAD = 2 };

typedef struct {
    char *data;
    size_t len, cap, width;
} Vec;

static int vec_push(Vec *v, const void *x) {
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4096;
        char *d = realloc(v->data, cap * v->width);
        if (!d) return -1;
        v->data = d;
        v->cap = cap;
    }
    memcpy(v->data + v->len * v->width, x, v->width);
    v->len++;
    return 0;
}

/* interned texts: an arena, offsets, and an open-addressing table of ids */
typedef struct {
    char *arena;
    size_t arena_len, arena_cap;
    Vec off;  /* size_t */
    Vec lens; /* uint32 */
    int32_t *slots;
    uint64_t *hashes;
    size_t nslots;
} Interner;

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 29;
    return h;
}

static int interner_grow(Interner *t) {
    size_t n = t->nslots ? t->nslots * 2 : 4096;
    int32_t *slots = malloc(n * sizeof(int32_t));
    uint64_t *hashes = malloc(n * sizeof(uint64_t));
    if (!slots || !hashes) {
        free(slots);
        free(hashes);
        return -1;
    }
    for (size_t i = 0; i < n; i++) slots[i] = -1;
    for (size_t i = 0; i < t->nslots; i++) {
        if (t->slots[i] < 0) continue;
        size_t j = t->hashes[i] & (n - 1);
        while (slots[j] >= 0) j = (j + 1) & (n - 1);
        slots[j] = t->slots[i];
        hashes[j] = t->hashes[i];
    }
    free(t->slots);
    free(t->hashes);
    t->slots = slots;
    t->hashes = hashes;
    t->nslots = n;
    return 0;
}

static int64_t intern(Interner *t, const uint8_t *p, size_t n) {
    if ((t->off.len + 1) * 2 > t->nslots && interner_grow(t) < 0) return -1;
    uint64_t h = hash_bytes(p, n);
    size_t j = h & (t->nslots - 1);
    const size_t *offs = (const size_t *)t->off.data;
    const uint32_t *lens = (const uint32_t *)t->lens.data;
    while (t->slots[j] >= 0) {
        int32_t id = t->slots[j];
        if (t->hashes[j] == h && lens[id] == n && memcmp(t->arena + offs[id], p, n) == 0) return id;
        j = (j + 1) & (t->nslots - 1);
    }
    if (n > 0xffffffffu) return -1;
    if (t->arena_len + n > t->arena_cap) {
        size_t cap = t->arena_cap ? t->arena_cap : 65536;
        while (cap < t->arena_len + n) cap *= 2;
        char *a = realloc(t->arena, cap);
        if (!a) return -1;
        t->arena = a;
        t->arena_cap = cap;
    }
    memcpy(t->arena + t->arena_len, p, n);
    size_t off = t->arena_len;
    uint32_t len = (uint32_t)n;
    if (vec_push(&t->off, &off) < 0 || vec_push(&t->lens, &len) < 0) return -1;
    t->arena_len += n;
    int32_t id = (int32_t)(t->off.len - 1);
    t->slots[j] = id;
    t->hashes[j] = h;
    return id;
}

enum { P_START, P_KEY_FIRST, P_KEY, P_AFTER_MEMBER, P_EV_FIRST, P_EV, P_EV_AFTER, P_END };

typedef struct {
    PyObject_HEAD int phase;
    int seen_events;
    const char *fallback; /* why the Python reader is needed, or NULL */
    int nomem;
    Interner strings;
    /* one row per kept event */
    Vec ph, name, cat, pid_tag, pid, tid_tag, tid, ts, dur;
    /* one row per kept args value: event row, key, tag, value (int64, float64 bits or text id) */
    Vec a_row, a_key, a_tag, a_val;
    PyObject *members; /* deviceProperties / distributedInfo -> their JSON text */
    size_t events;     /* events seen (kept or not) */
} Parser;

typedef struct {
    const uint8_t *p, *end;
    Parser *s;
} Cur;

static int bad(Cur *c, const char *why) {
    if (!c->s->fallback) c->s->fallback = why;
    return BAD;
}

static inline void ws(Cur *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\n' || *c->p == '\r' || *c->p == '\t')) c->p++;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline uint64_t has_zero(uint64_t v) { return (v - ONES) & ~v & HIGHS; }

/* A string at c->p ('"'): validated as orjson does (UTF-8, escapes, no control bytes); c->p after its
 * closing quote. *escaped: whether it holds a backslash. */
static int string(Cur *c, int *escaped) {
    const uint8_t *p = c->p + 1, *end = c->end;
    int esc = 0;
    for (;;) {
#ifdef __SSE2__
        { /* 16 bytes at a time: stop at a quote, a backslash, a control byte or a non-ASCII one */
            const __m128i quote = _mm_set1_epi8('"'), slash = _mm_set1_epi8('\\'), space = _mm_set1_epi8(0x20);
            while (end - p >= 16) {
                __m128i x = _mm_loadu_si128((const __m128i *)p);
                __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, slash)),
                                           _mm_cmplt_epi8(x, space)); /* signed: also 0x80 and up */
                int mask = _mm_movemask_epi8(hit);
                if (mask) {
                    p += __builtin_ctz((unsigned)mask);
                    break;
                }
                p += 16;
            }
        }
#endif
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t special = has_zero(w ^ (ONES * '"')) | has_zero(w ^ (ONES * '\\')) |
                               ((w - ONES * 0x20) & ~w & HIGHS) | (w & HIGHS);
            if (special) break;
            p += 8;
        }
        if (p >= end) return MORE;
        uint8_t b = *p;
        if (b == '"') {
            c->p = p + 1;
            if (escaped) *escaped = esc;
            return OK;
        }
        if (b < 0x20) return bad(c, "a control byte in a string");
        if (b == '\\') {
            esc = 1;
            if (end - p < 2) return MORE;
            uint8_t e = p[1];
            if (e == 'u') {
                if (end - p < 6) return MORE;
                unsigned v = 0;
                for (int i = 2; i < 6; i++) {
                    uint8_t h = p[i];
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= h - '0';
                    else if (h >= 'a' && h <= 'f') v |= h - 'a' + 10;
                    else if (h >= 'A' && h <= 'F') v |= h - 'A' + 10;
                    else return bad(c, "a bad \\u escape");
                }
                if (v >= 0xD800 && v <= 0xDFFF) return bad(c, "a surrogate escape");
                p += 6;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p += 2;
            } else {
                return bad(c, "a bad escape");
            }
            continue;
        }
        if (b < 0x80) {
            p++;
            continue;
        }
        /* UTF-8, strictly: no overlongs, no surrogates, nothing over U+10FFFF */
        int n;
        uint8_t lo = 0x80, hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) n = 1;
        else if (b == 0xE0) n = 2, lo = 0xA0;
        else if (b == 0xED) n = 2, hi = 0x9F;
        else if (b >= 0xE1 && b <= 0xEF) n = 2;
        else if (b == 0xF0) n = 3, lo = 0x90;
        else if (b >= 0xF1 && b <= 0xF3) n = 3;
        else if (b == 0xF4) n = 3, hi = 0x8F;
        else return bad(c, "invalid UTF-8");
        if (end - p < n + 1) return MORE;
        if (p[1] < lo || p[1] > hi) return bad(c, "invalid UTF-8");
        for (int i = 2; i <= n; i++)
            if ((p[i] & 0xC0) != 0x80) return bad(c, "invalid UTF-8");
        p += n + 1;
    }
}

static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number at c->p: *tag T_INT (int64 in *iv) or T_FLOAT (*dv). Integers over 18 digits and values
 * that overflow a double give up (orjson makes the first floats and refuses the second). */
static int number(Cur *c, int *tag, int64_t *iv, double *dv) {
    const uint8_t *p = c->p, *end = c->end, *start = p;
    int neg = 0;
    if (*p == '-') neg = 1, p++;
    if (p >= end) return MORE;
    const uint8_t *int_start = p;
    uint64_t mant = 0;
    int sig = 0; /* digits in mant from the first non-zero one */
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            if (sig < 19) mant = mant * 10 + (uint64_t)(*p - '0');
            sig++;
            p++;
        }
    } else {
        return bad(c, "not a JSON value");
    }
    int int_digits = (int)(p - int_start);
    int frac_digits = 0, has_frac = 0, has_exp = 0;
    if (p < end && *p == '.') {
        has_frac = 1;
        p++;
        const uint8_t *f = p;
        while (p < end && *p >= '0' && *p <= '9') {
            if (sig < 19) mant = mant * 10 + (uint64_t)(*p - '0');
            if (sig || *p != '0') sig++;
            p++;
        }
        frac_digits = (int)(p - f);
        if (p < end && frac_digits == 0) return bad(c, "a number without digits after '.'");
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        has_exp = 1;
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        const uint8_t *e = p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        if (p < end && p == e) return bad(c, "a number without exponent digits");
    }
    if (p >= end) return MORE; /* the number may go on in the next piece */
    c->p = p;
    if (!has_frac && !has_exp) {
        if (int_digits > 18) { /* orjson: an int to 2**64, a float beyond; only a kept one matters */
            if (tag == NULL && int_digits < 300) return OK;
            return bad(c, "an integer over 18 digits");
        }
        if (!tag) return OK;
        *tag = T_INT;
        *iv = neg ? -(int64_t)mant : (int64_t)mant;
        return OK;
    }
    if (tag) *tag = T_FLOAT;
    if (!has_exp && sig <= 19) { /* 1623142623726781.0: the fraction's trailing zeros change nothing */
        while (frac_digits > 0 && mant % 10 == 0 && sig > 0) {
            mant /= 10;
            frac_digits--;
            sig--;
        }
        if (mant < (1ull << 53) && frac_digits <= 22) {
            double v = (double)mant / POW10[frac_digits];
            if (dv) *dv = neg ? -v : v;
            return OK;
        }
    }
    if (!has_exp && sig <= 15 && frac_digits <= 22) { /* exact: both fit a double, one rounding */
        double v = (double)mant / POW10[frac_digits];
        if (dv) *dv = neg ? -v : v;
        return OK;
    }
    size_t n = (size_t)(p - start);
    char buf[80];
    if (n >= sizeof buf) return bad(c, "a long number");
    memcpy(buf, start, n);
    buf[n] = 0;
    char *stop;
    double v = strtod(buf, &stop);
    if (stop != buf + n || isinf(v)) return bad(c, "a number that overflows");
    if (v == 0 && sig) return bad(c, "a number that underflows");
    if (dv) *dv = v;
    return OK;
}

static int literal(Cur *c, const char *word, size_t n) {
    size_t have = (size_t)(c->end - c->p);
    if (have < n) return memcmp(c->p, word, have) == 0 ? MORE : bad(c, "not a JSON value");
    if (memcmp(c->p, word, n) != 0) return bad(c, "not a JSON value");
    c->p += n;
    return OK;
}

/* Any value, validated and passed over. */
static int skip(Cur *c, int depth) {
    if (c->p >= c->end) return MORE;
    int r;
    switch (*c->p) {
    case '"':
        return string(c, NULL);
    case 't':
        return literal(c, "true", 4);
    case 'f':
        return literal(c, "false", 5);
    case 'n':
        return literal(c, "null", 4);
    case '[':
        if (depth >= MAX_DEPTH) return bad(c, "deep nesting");
        c->p++;
        ws(c);
        if (c->p >= c->end) return MORE;
        if (*c->p == ']') {
            c->p++;
            return OK;
        }
        for (;;) {
            if ((r = skip(c, depth + 1)) != OK) return r;
            ws(c);
            if (c->p >= c->end) return MORE;
            if (*c->p == ']') {
                c->p++;
                return OK;
            }
            if (*c->p != ',') return bad(c, "a list without ',' or ']'");
            c->p++;
            ws(c);
        }
    case '{':
        if (depth >= MAX_DEPTH) return bad(c, "deep nesting");
        c->p++;
        ws(c);
        if (c->p >= c->end) return MORE;
        if (*c->p == '}') {
            c->p++;
            return OK;
        }
        for (;;) {
            if (c->p >= c->end) return MORE;
            if (*c->p != '"') return bad(c, "an object key that is not a string");
            if ((r = string(c, NULL)) != OK) return r;
            ws(c);
            if (c->p >= c->end) return MORE;
            if (*c->p != ':') return bad(c, "an object without ':'");
            c->p++;
            ws(c);
            if ((r = skip(c, depth + 1)) != OK) return r;
            ws(c);
            if (c->p >= c->end) return MORE;
            if (*c->p == '}') {
                c->p++;
                return OK;
            }
            if (*c->p != ',') return bad(c, "an object without ',' or '}'");
            c->p++;
            ws(c);
        }
    default:
        return number(c, NULL, NULL, NULL);
    }
}

/* A value kept: its tag and its 8 bytes (int64, float64 bits, or the id of its interned JSON text). */
static int value(Cur *c, int *tag, int64_t *out) {
    if (c->p >= c->end) return MORE;
    const uint8_t *start = c->p;
    int r;
    double dv;
    switch (*c->p) {
    case '"':
        if ((r = string(c, NULL)) != OK) return r;
        *tag = T_STR;
        break;
    case 't':
        *tag = T_TRUE;
        return literal(c, "true", 4);
    case 'f':
        *tag = T_FALSE;
        return literal(c, "false", 5);
    case 'n':
        *tag = T_NULL;
        return literal(c, "null", 4);
    case '[':
    case '{':
        if ((r = skip(c, 1)) != OK) return r;
        *tag = T_RAW;
        break;
    default:
        if ((r = number(c, tag, out, &dv)) != OK) return r;
        if (*tag == T_FLOAT) memcpy(out, &dv, 8);
        return OK;
    }
    int64_t id = intern(&c->s->strings, start, (size_t)(c->p - start));
    if (id < 0) {
        c->s->nomem = 1;
        return bad(c, "out of memory");
    }
    *out = id;
    return OK;
}

static int key_is(const uint8_t *k, size_t n, const char *word) {
    size_t m = strlen(word);
    return n == m && memcmp(k, word, m) == 0;
}

/* A key at c->p: its text without quotes in *k, *n; ':' and blanks after it passed. */
static int key(Cur *c, const uint8_t **k, size_t *n) {
    if (c->p >= c->end) return MORE;
    if (*c->p != '"') return bad(c, "an object key that is not a string");
    const uint8_t *start = c->p;
    int escaped, r;
    if ((r = string(c, &escaped)) != OK) return r;
    if (escaped) return bad(c, "an escape in a key");
    *k = start + 1;
    *n = (size_t)(c->p - start - 2);
    ws(c);
    if (c->p >= c->end) return MORE;
    if (*c->p != ':') return bad(c, "an object without ':'");
    c->p++;
    ws(c);
    return OK;
}

/* The event's args (c->p at '{'): the kept keys' values appended for row `row`. */
static int args(Cur *c, uint32_t row) {
    Parser *s = c->s;
    c->p++;
    ws(c);
    if (c->p >= c->end) return MORE;
    if (*c->p == '}') {
        c->p++;
        return OK;
    }
    uint32_t seen = 0;
    for (;;) {
        const uint8_t *k;
        size_t n;
        int r;
        if ((r = key(c, &k, &n)) != OK) return r;
        int which = -1;
        if (n >= 4 && n <= 25) {
            for (int i = 0; i < N_ARG_KEYS; i++)
                if (ARG_LENS[i] == n && k[0] == (uint8_t)ARG_KEYS[i][0] && memcmp(k, ARG_KEYS[i], n) == 0) {
                    which = i;
                    break;
                }
        }
        if (which < 0) {
            if ((r = skip(c, 2)) != OK) return r;
        } else {
            if (seen & (1u << which)) return bad(c, "an args key given twice");
            seen |= 1u << which;
            int tag;
            int64_t v = 0;
            if ((r = value(c, &tag, &v)) != OK) return r;
            uint8_t key8 = (uint8_t)which, tag8 = (uint8_t)tag;
            if (vec_push(&s->a_row, &row) < 0 || vec_push(&s->a_key, &key8) < 0 || vec_push(&s->a_tag, &tag8) < 0 ||
                vec_push(&s->a_val, &v) < 0) {
                s->nomem = 1;
                return bad(c, "out of memory");
            }
        }
        ws(c);
        if (c->p >= c->end) return MORE;
        if (*c->p == '}') {
            c->p++;
            return OK;
        }
        if (*c->p != ',') return bad(c, "an object without ',' or '}'");
        c->p++;
        ws(c);
    }
}

enum { E_PH, E_NAME, E_CAT, E_PID, E_TID, E_TS, E_DUR, E_ARGS };

/* One event (c->p at its first byte). Kept: complete events ("X"), process and thread names ("M"),
 * the allocator's "[memory]" instants; the rest validated and dropped. */
static int event(Cur *c) {
    Parser *s = c->s;
    if (c->p >= c->end) return MORE;
    if (*c->p != '{') {
        int r = skip(c, 1);
        return r == MORE ? MORE : bad(c, "an event that is not an object");
    }
    size_t a_len = s->a_row.len;
    uint32_t row = (uint32_t)s->ph.len;
    if (s->ph.len >= 0xffffffffu) return bad(c, "over 4 billion events");
    int ph = 0, seen = 0;
    int32_t name = -1, cat = -1;
    uint8_t pid_tag = T_ABSENT, tid_tag = T_ABSENT;
    int64_t pid = 0, tid = 0;
    int ts_tag = T_ABSENT, dur_tag = T_ABSENT;
    double ts = 0, dur = 0;
    const uint8_t *name_text = NULL;
    size_t name_len = 0;
    int name_escaped = 0;
    int r;
    c->p++;
    ws(c);
    if (c->p >= c->end) return MORE;
    if (*c->p == '}') {
        c->p++;
        s->events++;
        return OK;
    }
    for (;;) {
        const uint8_t *k;
        size_t n;
        if ((r = key(c, &k, &n)) != OK) goto out;
        int which = -1;
        if (n == 2 && k[0] == 'p' && k[1] == 'h') which = E_PH;
        else if (key_is(k, n, "name")) which = E_NAME;
        else if (key_is(k, n, "cat")) which = E_CAT;
        else if (key_is(k, n, "pid")) which = E_PID;
        else if (key_is(k, n, "tid")) which = E_TID;
        else if (n == 2 && k[0] == 't' && k[1] == 's') which = E_TS;
        else if (key_is(k, n, "dur")) which = E_DUR;
        else if (key_is(k, n, "args")) which = E_ARGS;
        if (which >= 0) {
            if (seen & (1 << which)) {
                r = bad(c, "an event key given twice");
                goto out;
            }
            seen |= 1 << which;
        }
        if (c->p >= c->end) {
            r = MORE;
            goto out;
        }
        uint8_t first = *c->p;
        if (which == E_ARGS) {
            if (first != '{') {
                r = (first == '[' || first == '"' || first == 't' || first == 'f' || first == 'n' ||
                     first == '-' || (first >= '0' && first <= '9'))
                        ? bad(c, "args that are not an object")
                        : bad(c, "not a JSON value");
                goto out;
            }
            if ((r = args(c, row)) != OK) goto out;
        } else if (which < 0) {
            if ((r = skip(c, 1)) != OK) goto out;
        } else if (which == E_PH || which == E_NAME || which == E_CAT) {
            if (first != '"') {
                if (which == E_CAT && first == 'n') { /* "cat": null is no category, as an absent one */
                    if ((r = literal(c, "null", 4)) != OK) goto out;
                    cat = -2;
                } else {
                    r = bad(c, "a non-string ph, name or cat");
                    goto out;
                }
            } else {
                const uint8_t *start = c->p;
                int escaped;
                if ((r = string(c, &escaped)) != OK) goto out;
                size_t len = (size_t)(c->p - start);
                if (which == E_PH) {
                    if (escaped) {
                        r = bad(c, "an escaped ph");
                        goto out;
                    }
                    ph = len == 3 && start[1] == 'X' ? PH_X
                         : len == 3 && start[1] == 'M' ? PH_M
                         : len == 3 && (start[1] == 'i' || start[1] == 'I') ? PH_I
                                                                              : 0;
                } else {
                    int64_t id = intern(&s->strings, start, len);
                    if (id < 0) {
                        s->nomem = 1;
                        r = bad(c, "out of memory");
                        goto out;
                    }
                    if (which == E_NAME) {
                        name = (int32_t)id;
                        name_text = start + 1;
                        name_len = len - 2;
                        name_escaped = escaped;
                    } else {
                        cat = (int32_t)id;
                    }
                }
            }
        } else if (which == E_PID || which == E_TID) {
            int tag;
            int64_t v = 0;
            if (first != '"' && first != '-' && !(first >= '0' && first <= '9')) {
                r = bad(c, "a pid or tid that is not a number or a name");
                goto out;
            }
            if ((r = value(c, &tag, &v)) != OK) goto out;
            if (tag == T_FLOAT) {
                r = bad(c, "a fractional pid or tid");
                goto out;
            }
            if (which == E_PID) pid_tag = (uint8_t)tag, pid = v;
            else tid_tag = (uint8_t)tag, tid = v;
        } else { /* ts, dur */
            if (first != '-' && !(first >= '0' && first <= '9')) {
                r = bad(c, "a ts or dur that is not a number");
                goto out;
            }
            int tag;
            int64_t iv = 0;
            double dv = 0;
            if ((r = number(c, &tag, &iv, &dv)) != OK) goto out;
            double x = tag == T_INT ? (double)iv : dv;
            if (which == E_TS) ts_tag = tag, ts = x;
            else dur_tag = tag, dur = x;
        }
        ws(c);
        if (c->p >= c->end) {
            r = MORE;
            goto out;
        }
        if (*c->p == '}') {
            c->p++;
            break;
        }
        if (*c->p != ',') {
            r = bad(c, "an object without ',' or '}'");
            goto out;
        }
        c->p++;
        ws(c);
    }
    s->events++;
    if (ph == PH_M) {
        if (name_escaped) return bad(c, "an escaped metadata name");
        if (!(name_text && (key_is(name_text, name_len, "process_name") || key_is(name_text, name_len, "thread_name"))))
            ph = 0;
    } else if (ph == PH_I) {
        if (name_escaped) return bad(c, "an escaped instant name");
        if (!(name_text && key_is(name_text, name_len, "[memory]"))) ph = 0;
    }
    if (ph == PH_X || ph == PH_I) {
        if (ts_tag == T_ABSENT || fabs(ts) > 4503599627370496.0) return bad(c, "an event without a usable ts");
    }
    if (ph == 0) {
        s->a_row.len = s->a_key.len = s->a_tag.len = s->a_val.len = a_len;
        return OK;
    }
    uint8_t ph8 = (uint8_t)ph;
    (void)dur_tag;
    if (vec_push(&s->ph, &ph8) < 0 || vec_push(&s->name, &name) < 0 || vec_push(&s->cat, &cat) < 0 ||
        vec_push(&s->pid_tag, &pid_tag) < 0 || vec_push(&s->pid, &pid) < 0 || vec_push(&s->tid_tag, &tid_tag) < 0 ||
        vec_push(&s->tid, &tid) < 0 || vec_push(&s->ts, &ts) < 0 || vec_push(&s->dur, &dur) < 0) {
        s->nomem = 1;
        return bad(c, "out of memory");
    }
    return OK;
out:
    s->a_row.len = s->a_key.len = s->a_tag.len = s->a_val.len = a_len;
    return r;
}

static Vec *columns(Parser *s, int i) {
    Vec *all[] = {&s->ph,  &s->name, &s->cat,   &s->pid_tag, &s->pid,   &s->tid_tag, &s->tid,
                  &s->ts,  &s->dur,  &s->a_row, &s->a_key,   &s->a_tag, &s->a_val};
    return i < 13 ? all[i] : NULL;
}
static const char *COLUMN_NAMES[] = {"ph",  "name",  "cat",   "pid_tag", "pid",   "tid_tag", "tid",
                                     "ts",  "dur",   "a_row", "a_key",   "a_tag", "a_val"};
static const size_t COLUMN_WIDTHS[] = {1, 4, 4, 1, 8, 1, 8, 8, 8, 4, 1, 1, 8};

static int Parser_init(Parser *s, PyObject *a, PyObject *kw) {
    if (!PyArg_ParseTuple(a, "")) return -1;
    for (int i = 0; i < 13; i++) {
        Vec *v = columns(s, i);
        free(v->data);
        memset(v, 0, sizeof *v);
        v->width = COLUMN_WIDTHS[i];
    }
    s->strings.off.width = sizeof(size_t);
    s->strings.lens.width = sizeof(uint32_t);
    s->phase = P_START;
    Py_XSETREF(s->members, PyDict_New());
    return s->members ? 0 : -1;
}

static void Parser_dealloc(Parser *s) {
    for (int i = 0; i < 13; i++) free(columns(s, i)->data);
    free(s->strings.arena);
    free(s->strings.off.data);
    free(s->strings.lens.data);
    free(s->strings.slots);
    free(s->strings.hashes);
    Py_XDECREF(s->members);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

/* One top-level member (c->p at its key): traceEvents opens the events, deviceProperties and
 * distributedInfo are kept as text, the rest passed over. */
static int member(Cur *c) {
    Parser *s = c->s;
    const uint8_t *k;
    size_t n;
    int r;
    if ((r = key(c, &k, &n)) != OK) return r;
    if (c->p >= c->end) return MORE;
    if (key_is(k, n, "traceEvents")) {
        if (s->seen_events) return bad(c, "two traceEvents");
        if (*c->p != '[') return bad(c, "traceEvents that is not a list");
        c->p++;
        s->seen_events = 1;
        s->phase = P_EV_FIRST;
        return OK;
    }
    const char *keep = key_is(k, n, "deviceProperties") ? "deviceProperties"
                       : key_is(k, n, "distributedInfo") ? "distributedInfo"
                                                         : NULL;
    const uint8_t *start = c->p;
    if ((r = skip(c, 1)) != OK) return r;
    if (keep) {
        PyObject *text = PyBytes_FromStringAndSize((const char *)start, c->p - start);
        if (!text || PyDict_SetItemString(s->members, keep, text) < 0) {
            Py_XDECREF(text);
            return -1;
        }
        Py_DECREF(text);
    }
    s->phase = P_AFTER_MEMBER;
    return OK;
}

static PyObject *Parser_feed(Parser *s, PyObject *a) {
    Py_buffer view;
    Py_ssize_t start, soft_end;
    int final;
    if (!PyArg_ParseTuple(a, "y*nnp", &view, &start, &soft_end, &final)) return NULL;
    if (start < 0 || start > view.len) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "start out of range");
        return NULL;
    }
    const uint8_t *base = view.buf;
    Cur c = {base + start, base + view.len, s};
    const uint8_t *soft = base + (soft_end < view.len ? soft_end : view.len);
    const uint8_t *unit = c.p;
    int r = OK, soft_stop = 0;
    while (!s->fallback) {
        ws(&c);
        unit = c.p;
        if (c.p >= c.end) break;
        if (c.p >= soft) {
            soft_stop = 1;
            break;
        }
        uint8_t b = *c.p;
        switch (s->phase) {
        case P_START:
            if (b != '{') {
                r = bad(&c, "not an object");
                break;
            }
            c.p++;
            s->phase = P_KEY_FIRST;
            break;
        case P_KEY_FIRST:
            if (b == '}') {
                c.p++;
                s->phase = P_END;
                break;
            }
            /* fall through */
        case P_KEY:
            r = member(&c);
            break;
        case P_AFTER_MEMBER:
            if (b == ',') c.p++, s->phase = P_KEY;
            else if (b == '}') c.p++, s->phase = P_END;
            else r = bad(&c, "an object without ',' or '}'");
            break;
        case P_EV_FIRST:
            if (b == ']') {
                c.p++;
                s->phase = P_AFTER_MEMBER;
                break;
            }
            /* fall through */
        case P_EV:
            r = event(&c);
            if (r == OK) s->phase = P_EV_AFTER;
            break;
        case P_EV_AFTER:
            if (b == ',') c.p++, s->phase = P_EV;
            else if (b == ']') c.p++, s->phase = P_AFTER_MEMBER;
            else r = bad(&c, "a list without ',' or ']'");
            break;
        default: /* P_END */
            r = bad(&c, "text after the trace");
        }
        if (r == -1) { /* a Python error */
            PyBuffer_Release(&view);
            return NULL;
        }
        if (r == MORE) {
            c.p = unit;
            break;
        }
    }
    if (!s->fallback && final && !soft_stop && (c.p < c.end || s->phase != P_END)) {
        ws(&c);
        if (c.p < c.end || s->phase != P_END) s->fallback = "the text ends early";
    }
    Py_ssize_t at = c.p - base;
    PyBuffer_Release(&view);
    if (s->nomem) return PyErr_NoMemory();
    if (s->fallback) return PyLong_FromLong(-1);
    if (!s->seen_events && final && !soft_stop) {
        s->fallback = "no traceEvents list";
        return PyLong_FromLong(-1);
    }
    return PyLong_FromSsize_t(at);
}

static PyObject *Parser_finish(Parser *s, PyObject *unused) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (int i = 0; i < 13; i++) {
        Vec *v = columns(s, i);
        PyObject *b = PyBytes_FromStringAndSize(v->data ? v->data : "", (Py_ssize_t)(v->len * v->width));
        free(v->data);
        v->data = NULL;
        v->len = v->cap = 0;
        if (!b || PyDict_SetItemString(out, COLUMN_NAMES[i], b) < 0) {
            Py_XDECREF(b);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(b);
    }
    Interner *t = &s->strings;
    PyObject *texts = PyList_New((Py_ssize_t)t->off.len);
    if (!texts) {
        Py_DECREF(out);
        return NULL;
    }
    for (size_t i = 0; i < t->off.len; i++) {
        PyObject *b = PyBytes_FromStringAndSize(t->arena + ((size_t *)t->off.data)[i], ((uint32_t *)t->lens.data)[i]);
        if (!b) {
            Py_DECREF(texts);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(texts, (Py_ssize_t)i, b);
    }
    if (PyDict_SetItemString(out, "texts", texts) < 0 || PyDict_SetItemString(out, "members", s->members) < 0) {
        Py_DECREF(texts);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(texts);
    PyObject *n = PyLong_FromSize_t(s->events);
    if (!n || PyDict_SetItemString(out, "events", n) < 0) {
        Py_XDECREF(n);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(n);
    return out;
}

static PyObject *Parser_get_fallback(Parser *s, void *closure) {
    if (!s->fallback) Py_RETURN_NONE;
    return PyUnicode_FromString(s->fallback);
}

static PyObject *Parser_get_events(Parser *s, void *closure) { return PyLong_FromSize_t(s->events); }

static PyMethodDef Parser_methods[] = {
    {"feed", (PyCFunction)Parser_feed, METH_VARARGS, "feed(buffer, start, soft_end, final) -> position, or -1"},
    {"finish", (PyCFunction)Parser_finish, METH_NOARGS, "the columns, texts and kept members"},
    {NULL}};

static PyGetSetDef Parser_getset[] = {
    {"fallback", (getter)Parser_get_fallback, NULL, "why the Python reader is needed, or None", NULL},
    {"events", (getter)Parser_get_events, NULL, "events seen so far (kept or not)", NULL},
    {NULL}};

static PyTypeObject ParserType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "tb_gpu_advisor.formats.kineto._kineto.Parser",
    .tp_basicsize = sizeof(Parser),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Parser_init,
    .tp_dealloc = (destructor)Parser_dealloc,
    .tp_methods = Parser_methods,
    .tp_getset = Parser_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kineto", "Kineto JSON trace tokenizer.", -1, NULL};

PyMODINIT_FUNC PyInit__kineto(void) {
    if (PyType_Ready(&ParserType) < 0) return NULL;
    for (int i = 0; i < N_ARG_KEYS; i++) ARG_LENS[i] = strlen(ARG_KEYS[i]);
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    Py_INCREF(&ParserType);
    if (PyModule_AddObject(m, "Parser", (PyObject *)&ParserType) < 0) {
        Py_DECREF(&ParserType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
