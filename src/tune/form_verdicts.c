/* The verdicts of the form-class probe (form_verdicts.h): one per form class and
 * element, probed the first time a normal type of that class is planned.
 *
 * MPI libraries have packed some valid types wrongly: Intel MPI 2021.18 an
 * hvector, hindexed or struct whose blocks of one piece are 1 byte apart
 * (MPI_Type_create_hvector(n, 1, 1, MPI_INT) packs as if contiguous), Open MPI
 * 5.0.11 one whose stride is -1 byte. The normal types of the engine are made
 * of few constructors with steps of any size, so rather than avoid each
 * known case, every class of step a normal type has is tried once on a small
 * canonical instance against the engine's own pack (mg_dt_form_class_probe),
 * and a type with a class the library gets wrong is not handed to it
 * (types.c). The probe is deterministic (fixed instance, fixed data, a pure
 * function of the library), so every rank reaches the same verdict. */
#define _POSIX_C_SOURCE 200809L
#include "form_verdicts.h"

#include "mpiguide/dt.h"
#include <pthread.h>
#include <stdlib.h>

typedef struct {
    mg_dt_form_class c;
    int right;    /* the probe's verdict (an error probing: wrong) */
    long refused; /* types refused for this class */
} verdict;

/* The state of this layer: the verdicts so far, in the order probed. */
static struct {
    pthread_mutex_t lock;
    verdict *v;
    size_t n, cap;
} forms = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static int same(const mg_dt_form_class *x, const mg_dt_form_class *y)
{
    return mg_dt_form_class_index(x) == mg_dt_form_class_index(y) && x->elem == y->elem;
}

/* lock held: the verdict of c, probed now if it is new (NULL: out of memory). */
static verdict *verdict_of(const mg_dt_form_class *c)
{
    for (size_t i = 0; i < forms.n; i++)
        if (same(&forms.v[i].c, c)) return &forms.v[i];
    if (forms.n == forms.cap) {
        size_t cap = forms.cap ? 2 * forms.cap : 16;
        verdict *v = realloc(forms.v, cap * sizeof *v);
        if (!v) return NULL;
        forms.v = v;
        forms.cap = cap;
    }
    verdict *v = &forms.v[forms.n++];
    *v = (verdict){.c = *c};
    if (mg_dt_form_class_probe(c, &v->right) != MG_DT_SUCCESS) v->right = 0;
    return v;
}

int mg_tune__forms_accept(MPI_Datatype type)
{
    enum { FEW = 32 };
    mg_dt_form_class few[FEW], *cs = few;
    int n = 0, rc = mg_dt_form_classes(type, 1, few, FEW, &n);
    if (rc == MG_DT_ERR_TRUNCATED && (cs = malloc(sizeof *cs * (size_t)n)) != NULL)
        rc = mg_dt_form_classes(type, 1, cs, n, &n);
    if (rc != MG_DT_SUCCESS) {
        if (cs != few) free(cs);
        return 0;
    }
    int ok = 1;
    pthread_mutex_lock(&forms.lock);
    for (int i = 0; i < n; i++) {
        verdict *v = verdict_of(&cs[i]);
        if (v && v->right) continue;
        ok = 0;
        if (v) v->refused++;
    }
    pthread_mutex_unlock(&forms.lock);
    if (cs != few) free(cs);
    return ok;
}

void mg_tune__forms_refused(void (*fn)(const char *name, const char *instance, long types, void *arg), void *arg)
{
    pthread_mutex_lock(&forms.lock);
    for (size_t i = 0; i < forms.n; i++) {
        if (forms.v[i].right) continue;
        char name[256], instance[512];
        if (mg_dt_form_class_name(&forms.v[i].c, name, sizeof name) != MG_DT_SUCCESS) name[0] = '\0';
        if (mg_dt_form_class_instance(&forms.v[i].c, instance, sizeof instance) != MG_DT_SUCCESS) instance[0] = '\0';
        fn(name, instance, forms.v[i].refused, arg);
    }
    pthread_mutex_unlock(&forms.lock);
}

void mg_tune__forms_free(void)
{
    pthread_mutex_lock(&forms.lock);
    free(forms.v);
    forms.v = NULL;
    forms.n = forms.cap = 0;
    pthread_mutex_unlock(&forms.lock);
}
