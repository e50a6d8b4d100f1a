/* The refusal model's word features, hashed, looked up and summed in C.
 *
 * This is the compiled form of the array arithmetic in refusal_batch.py (read its module
 * docstring first): for each text it splits the four parts the batch scorer lays out (the
 * head, the opening's words, the words after the pivot, the ending) into tokens exactly as
 * str.split() does, hashes every feature name the model would build from them with the same
 * polynomial hash, finds each hash in the same open-addressing table and adds up the weights,
 * as whole numbers (units of 1/FIXED). The Python side passes everything that defines the
 * result (the hash's base, the prefixes' hashes, the token limits, the table), so nothing
 * here has to be kept in step with the model by hand; the tests hold this, the numpy scorer
 * and the one-by-one scorer equal to the bit.
 *
 * word_sums does the same for the attack model (attack_model.py): every token of a text and
 * every adjacent pair, each different one once, in a table of the same layout; the tests hold it, that model's numpy
 * scorer and its one-by-one scorer equal to the bit.
 *
 * unspaced_read is the learned attack readers' reading of a text in Chinese, Japanese or
 * Korean (attack_hijack_model.hijack_read), which makes a pair of every two letters: in Python
 * it costs more than scoring them. The tests hold it equal to the Python reading, letter class
 * by letter class over every code point.
 *
 * Building it is optional (setup.py): without a compiler the numpy scorers are used.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define MIX 0x9E3779B97F4A7C15ULL /* refusal_batch._MIX */
#define SPACE 33ULL               /* the hash's value of " ": its code point plus one */

typedef struct {
    uint64_t h;  /* H(token) */
    uint64_t pw; /* P ** len(token) */
} Tok;

typedef struct {
    Tok *at;
    Py_ssize_t n, cap;
} Toks;

typedef struct {
    uint64_t h, pw; /* H(prefix), P ** len(prefix) */
} Prefix;

/* A slot of the table, with its name's weights beside it: a look-up reads one place. */
typedef struct {
    uint64_t key; /* 0: empty */
    int64_t w0, w1;
} Slot;

typedef struct {
    const Slot *slot; /* a power of two of them, then one (0, 0, 0) for names not there */
    uint64_t mask;
    int shift, reach;
} Table;

/* A slot of a table with one column of weights (the attack models' words and pairs): two
 * thirds of a Slot, for tables of tens of thousands of names. */
typedef struct {
    uint64_t key; /* 0: empty */
    int64_t w0;
} WordSlot;

typedef struct {
    const WordSlot *slot; /* a power of two of them, then one (0, 0) for names not there */
    uint64_t mask;
    int shift, reach;
} WordTable;

enum { O, O_LEAD, B0, B1, B2, PV, PV_LEAD, E, E_LEAD, N_PREFIXES };

typedef struct {
    uint64_t base;
    Prefix prefix[N_PREFIXES];
    Py_ssize_t pair_tokens, opening_tokens, pivot_tokens, ending_tokens;
    Table table;
} Model;

static int
push(Toks *t, uint64_t h, uint64_t pw)
{
    if (t->n == t->cap) {
        Py_ssize_t cap = t->cap ? 2 * t->cap : 256;
        Tok *grown = PyMem_Realloc(t->at, (size_t)cap * sizeof(Tok));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        t->at = grown;
        t->cap = cap;
    }
    t->at[t->n].h = h;
    t->at[t->n].pw = pw;
    t->n++;
    return 0;
}

/* The tokens of s as str.split() finds them (at most limit of them; limit < 0: all). */
static int
tokenize(PyObject *s, uint64_t base, Py_ssize_t limit, Toks *out)
{
    out->n = 0;
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "scorer: every text and part must be a str");
        return -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(s) < 0)
        return -1;
#endif
    const Py_ssize_t len = PyUnicode_GET_LENGTH(s);
    const void *data = PyUnicode_DATA(s);
    uint64_t h = 0, pw = 1;
    int inside = 0;
    /* One loop per width of the string's characters, so that each reads its own directly. */
#define SCAN(TYPE)                                                                             \
    for (Py_ssize_t i = 0; i < len; i++) {                                                     \
        const Py_UCS4 c = ((const TYPE *)data)[i];                                             \
        if (Py_UNICODE_ISSPACE(c)) {                                                           \
            if (inside) {                                                                      \
                inside = 0;                                                                    \
                if (push(out, h, pw) < 0)                                                      \
                    return -1;                                                                 \
                if (out->n == limit)                                                           \
                    return 0;                                                                  \
            }                                                                                  \
        }                                                                                      \
        else {                                                                                 \
            if (!inside) {                                                                     \
                inside = 1;                                                                    \
                h = 0;                                                                         \
                pw = 1;                                                                        \
            }                                                                                  \
            h += ((uint64_t)c + 1) * pw;                                                       \
            pw *= base;                                                                        \
        }                                                                                      \
    }
    switch (PyUnicode_KIND(s)) {
    case PyUnicode_1BYTE_KIND:
        SCAN(Py_UCS1)
        break;
    case PyUnicode_2BYTE_KIND:
        SCAN(Py_UCS2)
        break;
    default:
        SCAN(Py_UCS4)
    }
#undef SCAN
    if (inside && push(out, h, pw) < 0)
        return -1;
    return 0;
}

static inline const Slot *
find(const Table *t, uint64_t key)
{
    const uint64_t home = (key * MIX) >> t->shift;
    for (int i = 0; i <= t->reach; i++) {
        const Slot *at = &t->slot[(home + (uint64_t)i) & t->mask];
        if (at->key == key)
            return at;
        if (at->key == 0) /* names are placed past taken slots only: it is not further on */
            break;
    }
    return &t->slot[t->mask + 1];
}

static inline const WordSlot *
find_word(const WordTable *t, uint64_t key)
{
    const uint64_t home = (key * MIX) >> t->shift;
    for (int i = 0; i <= t->reach; i++) {
        const WordSlot *at = &t->slot[(home + (uint64_t)i) & t->mask];
        if (at->key == key)
            return at;
        if (at->key == 0) /* names are placed past taken slots only: it is not further on */
            break;
    }
    return &t->slot[t->mask + 1];
}

typedef struct {
    const Table *table;
    int64_t refusal, full;
} Sums;

/* A word feature: read by the refusal head alone. */
static inline void
word(Sums *s, uint64_t key)
{
    s->refusal += find(s->table, key)->w0;
}

/* A positional feature: read by both heads. */
static inline void
positional(Sums *s, uint64_t key)
{
    const Slot *at = find(s->table, key);
    s->refusal += at->w0;
    s->full += at->w1;
}

static inline uint64_t
cat(const Prefix *p, uint64_t h)
{
    return p->h + p->pw * h;
}

/* H(a + " " + b) from H(a), P ** len(a) and H(b). */
static inline uint64_t
join(const Tok *a, uint64_t hb, uint64_t base)
{
    return a->h + a->pw * (SPACE + base * hb);
}

/* prefix + tok for each token, and prefix + prev + " " + tok, where prev is "^" for the
 * first: then it is lead + tok (lead being prefix + "^ "). */
static void
grams(Sums *s, const Model *m, const Prefix *prefix, const Prefix *lead, const Tok *tok,
      Py_ssize_t n)
{
    for (Py_ssize_t k = 0; k < n; k++) {
        positional(s, cat(prefix, tok[k].h));
        positional(s, k ? cat(prefix, join(&tok[k - 1], tok[k].h, m->base)) : cat(lead, tok[k].h));
    }
}

static int
score_one(const Model *m, PyObject *head, PyObject *opening, PyObject *after, PyObject *tail,
          Toks *toks, Sums *s)
{
    const uint64_t base = m->base;
    /* Every word of the head, and the pairs of its first pair_tokens words. */
    if (tokenize(head, base, -1, toks) < 0)
        return -1;
    for (Py_ssize_t k = 0; k < toks->n; k++) {
        word(s, toks->at[k].h);
        if (k >= 1 && k < m->pair_tokens)
            word(s, join(&toks->at[k - 1], toks->at[k].h, base));
    }
    /* The opening's words: grams, and the first few by place. */
    if (tokenize(opening, base, m->opening_tokens, toks) < 0)
        return -1;
    grams(s, m, &m->prefix[O], &m->prefix[O_LEAD], toks->at, toks->n);
    for (Py_ssize_t k = 0; k < toks->n && k <= B2 - B0; k++)
        positional(s, cat(&m->prefix[B0 + k], toks->at[k].h));
    /* The words after the pivot. */
    if (tokenize(after, base, m->pivot_tokens, toks) < 0)
        return -1;
    grams(s, m, &m->prefix[PV], &m->prefix[PV_LEAD], toks->at, toks->n);
    /* The ending's last words. */
    if (tokenize(tail, base, -1, toks) < 0)
        return -1;
    const Py_ssize_t skip = toks->n > m->ending_tokens ? toks->n - m->ending_tokens : 0;
    grams(s, m, &m->prefix[E], &m->prefix[E_LEAD], toks->at + skip, toks->n - skip);
    return 0;
}

PyDoc_STRVAR(sums_doc,
"sums(heads, openings, afters, tails, base, prefixes, limits, slots, shift, reach)\n"
"--\n\n"
"Per text, the two heads' sums of feature weights, as ints (units of 1/FIXED).\n\n"
"heads, openings, afters, tails: lists of str, one per text. base: the hash's base.\n"
"prefixes: nine (H(prefix), P**len(prefix)) pairs: o:, o:^ , b0:, b1:, b2:, p:, p:^ , e:, "
"e:^ .\n"
"limits: (pair, opening, pivot, ending) token counts. slots: the table, a C-contiguous\n"
"buffer of 64-bit (key, refusal weight, full weight) triples, a power of two of them (key 0\n"
"is empty) and one more, all 0, for names not there. shift: 64 minus the table's bits.\n"
"reach: how far past its home slot a name may sit.");

static PyObject *
sums(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *heads, *openings, *afters, *tails, *prefixes, *slots_obj;
    unsigned long long base;
    Py_ssize_t limits[4];
    int shift, reach;
    if (!PyArg_ParseTuple(args, "O!O!O!O!KO!(nnnn)Oii:sums", &PyList_Type, &heads, &PyList_Type,
                          &openings, &PyList_Type, &afters, &PyList_Type, &tails, &base,
                          &PyTuple_Type, &prefixes, &limits[0], &limits[1], &limits[2],
                          &limits[3], &slots_obj, &shift, &reach))
        return NULL;
    const Py_ssize_t n = PyList_GET_SIZE(heads);
    if (PyList_GET_SIZE(openings) != n || PyList_GET_SIZE(afters) != n ||
        PyList_GET_SIZE(tails) != n) {
        PyErr_SetString(PyExc_ValueError, "refusal scorer: one of each part per text");
        return NULL;
    }
    if (PyTuple_GET_SIZE(prefixes) != N_PREFIXES) {
        PyErr_Format(PyExc_ValueError, "refusal scorer: %d prefixes expected", N_PREFIXES);
        return NULL;
    }
    if (shift < 1 || shift > 63 || reach < 0 || (uint64_t)reach >= 1ULL << (64 - shift)) {
        PyErr_SetString(PyExc_ValueError, "refusal scorer: bad table shape");
        return NULL;
    }
    for (int i = 0; i < 4; i++) {
        if (limits[i] < 1) {
            PyErr_SetString(PyExc_ValueError, "refusal scorer: token limits must be positive");
            return NULL;
        }
    }
    Model m = {.base = base,
               .pair_tokens = limits[0],
               .opening_tokens = limits[1],
               .pivot_tokens = limits[2],
               .ending_tokens = limits[3]};
    for (int i = 0; i < N_PREFIXES; i++) {
        unsigned long long h, pw;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(prefixes, i), "KK:prefix", &h, &pw))
            return NULL;
        m.prefix[i].h = h;
        m.prefix[i].pw = pw;
    }
    Py_buffer slots;
    if (PyObject_GetBuffer(slots_obj, &slots, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *out0 = NULL, *out1 = NULL, *result = NULL;
    Toks toks = {NULL, 0, 0};
    const uint64_t size = 1ULL << (64 - shift);
    /* divided, not multiplied: (size + 1) * sizeof(Slot) wraps round for the largest sizes */
    if ((size_t)slots.len % sizeof(Slot) || (uint64_t)slots.len / sizeof(Slot) != size + 1 ||
        (uintptr_t)slots.buf % _Alignof(Slot)) {
        PyErr_SetString(PyExc_ValueError, "refusal scorer: the slots do not match the shift");
        goto done;
    }
    m.table = (Table){.slot = slots.buf, .mask = size - 1, .shift = shift, .reach = reach};
    out0 = PyList_New(n);
    out1 = PyList_New(n);
    if (out0 == NULL || out1 == NULL)
        goto done;
    for (Py_ssize_t e = 0; e < n; e++) {
        Sums s = {&m.table, 0, 0};
        if (score_one(&m, PyList_GET_ITEM(heads, e), PyList_GET_ITEM(openings, e),
                      PyList_GET_ITEM(afters, e), PyList_GET_ITEM(tails, e), &toks, &s) < 0)
            goto done;
        PyObject *a = PyLong_FromLongLong(s.refusal);
        if (a == NULL)
            goto done;
        PyList_SET_ITEM(out0, e, a);
        PyObject *b = PyLong_FromLongLong(s.full);
        if (b == NULL)
            goto done;
        PyList_SET_ITEM(out1, e, b);
    }
    result = PyTuple_Pack(2, out0, out1);
done:
    PyMem_Free(toks.at);
    Py_XDECREF(out0);
    Py_XDECREF(out1);
    PyBuffer_Release(&slots);
    return result;
}

/* The attack model's word features (attack_model.py): every token of each text and every
 * adjacent pair "a b", looked up in a table of the same layout (its second weight unread). */
/* The slots a text has counted already: an open-addressing set of slot numbers (plus one,
 * so that 0 marks a free place), cleared for each text, grown with the longest one. */
typedef struct {
    uint64_t *at;
    size_t cap, used; /* places allocated; places in use for this text (a power of two) */
} Seen;

static int
seen_clear(Seen *s, Py_ssize_t features)
{
    size_t want = 16;
    while (want < 2 * (size_t)features + 2)
        want <<= 1;
    if (want > s->cap) {
        uint64_t *grown = PyMem_Realloc(s->at, want * sizeof(uint64_t));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->at = grown;
        s->cap = want;
    }
    s->used = want;
    memset(s->at, 0, want * sizeof(uint64_t));
    return 0;
}

/* 1 when v (not 0) was not in the set, and is now; 0 when it was. */
static inline int
seen_add(Seen *s, uint64_t v)
{
    const size_t mask = s->used - 1;
    size_t i = (size_t)((v * MIX) >> 32) & mask;
    while (s->at[i]) {
        if (s->at[i] == v)
            return 0;
        i = (i + 1) & mask;
    }
    s->at[i] = v;
    return 1;
}

PyDoc_STRVAR(word_sums_doc,
"word_sums(texts, base, slots, shift, reach)\n"
"--\n\n"
"Per text, the sum of the weights of its whitespace tokens (as str.split() cuts them) and of\n"
"each adjacent pair \"a b\", each different one counted once, as ints (units of 1/FIXED).\n"
"texts: a list of str. base: the hash's base. slots, shift, reach: the table, as for sums\n"
"but with one weight a slot: a C-contiguous buffer of (key, weight) pairs of 64 bits.");

static PyObject *
word_sums(PyObject *Py_UNUSED(module), PyObject *args)
{
    PyObject *texts, *slots_obj;
    unsigned long long base;
    int shift, reach;
    if (!PyArg_ParseTuple(args, "O!KOii:word_sums", &PyList_Type, &texts, &base, &slots_obj,
                          &shift, &reach))
        return NULL;
    if (shift < 1 || shift > 63 || reach < 0 || (uint64_t)reach >= 1ULL << (64 - shift)) {
        PyErr_SetString(PyExc_ValueError, "attack scorer: bad table shape");
        return NULL;
    }
    Py_buffer slots;
    if (PyObject_GetBuffer(slots_obj, &slots, PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    PyObject *out = NULL, *result = NULL;
    Toks toks = {NULL, 0, 0};
    Seen seen = {NULL, 0, 0};
    const uint64_t size = 1ULL << (64 - shift);
    if ((size_t)slots.len % sizeof(WordSlot) ||
        (uint64_t)slots.len / sizeof(WordSlot) != size + 1 ||
        (uintptr_t)slots.buf % _Alignof(WordSlot)) {
        PyErr_SetString(PyExc_ValueError, "attack scorer: the slots do not match the shift");
        goto done;
    }
    const WordTable table = {.slot = slots.buf, .mask = size - 1, .shift = shift, .reach = reach};
    const Py_ssize_t n = PyList_GET_SIZE(texts);
    out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t e = 0; e < n; e++) {
        if (tokenize(PyList_GET_ITEM(texts, e), base, -1, &toks) < 0)
            goto done;
        if (seen_clear(&seen, 2 * toks.n) < 0)
            goto done;
        int64_t z = 0;
        for (Py_ssize_t k = 0; k < toks.n; k++) {
            const WordSlot *word = find_word(&table, toks.at[k].h);
            if (seen_add(&seen, (uint64_t)(word - table.slot) + 1))
                z += word->w0;
            if (k >= 1) {
                const WordSlot *pair =
                    find_word(&table, join(&toks.at[k - 1], toks.at[k].h, base));
                if (seen_add(&seen, (uint64_t)(pair - table.slot) + 1))
                    z += pair->w0;
            }
        }
        PyObject *a = PyLong_FromLongLong(z);
        if (a == NULL)
            goto done;
        PyList_SET_ITEM(out, e, a);
    }
    result = out;
    out = NULL;
done:
    PyMem_Free(toks.at);
    PyMem_Free(seen.at);
    Py_XDECREF(out);
    PyBuffer_Release(&slots);
    return result;
}

/* A letter as the hijack model's reading finds them: what the pattern [^\W\d_] of Python's re
   matches in a str, a word character (Py_UNICODE_ISALNUM, or "_") that is not a decimal digit
   (Py_UNICODE_ISDECIMAL) nor "_". A character is alphanumeric where it is alphabetic or
   numeric (a digit or a decimal is numeric too), and none alphabetic is a decimal; so a
   letter is alphabetic, or numeric and not a decimal ("²", "½", "Ⅻ"). ASCII first: its
   letters are a-z and A-Z. */
static inline int
is_letter(Py_UCS4 c)
{
    if (c < 128)
        return (c | 0x20) - 'a' < 26;
    return Py_UNICODE_ISALPHA(c) || (Py_UNICODE_ISNUMERIC(c) && !Py_UNICODE_ISDECIMAL(c));
}

/* A letter of a script written without spaces between words: kana, CJK ideographs, Hangul
   (attack_hijack_model._UNSPACED). */
static inline int
is_unspaced(Py_UCS4 c)
{
    return (c >= 0x3040 && c <= 0x30FF) || (c >= 0x3400 && c <= 0x9FFF) ||
           (c >= 0xAC00 && c <= 0xD7AF);
}

PyDoc_STRVAR(unspaced_read_doc,
"unspaced_read(text)\n"
"--\n\n"
"The hijack model's reading of a text with letters written without spaces\n"
"(attack_hijack_model.hijack_read): its runs of letters, each run of kana, CJK ideographs\n"
"or Hangul as its adjacent pairs of letters (one letter alone as itself), the other letters\n"
"as words, joined by single spaces.");

static PyObject *
unspaced_read(PyObject *Py_UNUSED(module), PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "unspaced_read: the text must be a str");
        return NULL;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(text) < 0)
        return NULL;
#endif
    const Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    const int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    /* at most three characters out for one in: a pair and the blank before it */
    if (len > (PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Py_UCS4) - 1) / 3)
        return PyErr_NoMemory();
    Py_UCS4 *out = PyMem_Malloc((size_t)(3 * len + 1) * sizeof(Py_UCS4));
    if (out == NULL)
        return PyErr_NoMemory();
    Py_ssize_t n = 0;
    /* the run being read: 0 none, 1 letters of spaced scripts, 2 unspaced letters */
    int run = 0;
    Py_ssize_t unspaced = 0; /* letters in the unspaced run so far */
    Py_UCS4 last = 0;        /* its last letter */
    for (Py_ssize_t i = 0; i < len; i++) {
        const Py_UCS4 c = PyUnicode_READ(kind, data, i);
        const int now = !is_letter(c) ? 0 : is_unspaced(c) ? 2 : 1;
        if (run == 2 && now != 2 && unspaced == 1) {
            if (n)
                out[n++] = ' ';
            out[n++] = last; /* an unspaced letter alone */
        }
        if (now == 1) {
            if (run != 1 && n)
                out[n++] = ' ';
            out[n++] = c;
        }
        else if (now == 2) {
            unspaced = run == 2 ? unspaced + 1 : 1;
            if (unspaced > 1) {
                if (n)
                    out[n++] = ' ';
                out[n++] = last;
                out[n++] = c;
            }
            last = c;
        }
        run = now;
    }
    if (run == 2 && unspaced == 1) {
        if (n)
            out[n++] = ' ';
        out[n++] = last;
    }
    PyObject *result = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n);
    PyMem_Free(out);
    return result;
}

static PyMethodDef methods[] = {
    {"sums", sums, METH_VARARGS, sums_doc},
    {"word_sums", word_sums, METH_VARARGS, word_sums_doc},
    {"unspaced_read", unspaced_read, METH_O, unspaced_read_doc},
    {NULL, NULL, 0, NULL},
};

/* The SHA-256 of this file as it was built (setup.py passes it), so that a test can tell a
   module built from an older version of the file, as an editable install leaves it. */
#ifndef SOURCE_SHA256
#define SOURCE_SHA256 ""
#endif

static int
exec_module(PyObject *m)
{
    return PyModule_AddStringConstant(m, "SOURCE_SHA256", SOURCE_SHA256);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sidecar.checks._refusal_native",
    .m_doc = "The refusal and attack models' word features in C (see refusal_batch.py).",
    .m_size = 0,
    .m_methods = methods,
    .m_slots = slots,
};

PyMODINIT_FUNC
PyInit__refusal_native(void)
{
    return PyModuleDef_Init(&module);
}
