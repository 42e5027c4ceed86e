/* Online selection's decision logic (src/tune/online.h) on simulated timings
 * with a fixed seed: several simulated ranks run the same calls of a key, each
 * with times of its own; at every decision point they agree on the maximum
 * over the ranks, as the library does with one reduction. Checked: every rank
 * runs the same candidate at every call and reaches the same decision points;
 * the key settles on the fastest candidate; exploration stays within its caps
 * and drops a clearly slower candidate early; a rare key never explores; a
 * change of the settled choice's time makes the key explore again, a bounded
 * number of times; a point-to-point side whose peer still runs natively during
 * most of its exploration finds its fastest candidate by its fastest calls,
 * and during all of it, by its look again. No MPI, no clock: deterministic. */
#include "online.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;
#define EXPECT(cond)                                                                 \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #cond);      \
            failures++;                                                              \
        }                                                                            \
    } while (0)

enum { RANKS = 4 };
static unsigned long long seed = 12345;
static double noise(void) /* uniform in [0.95, 1.05) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return 0.95 + 0.1 * (double)(seed >> 11) / (double)(1ull << 53);
}

/* The times of candidate c on rank r at call i (seconds). */
typedef double (*timing)(int r, int c, long i);

/* n calls of one key on every rank; returns the number of decision points. */
static int simulate(mg_online_key *k, const mg_online_policy *p, long n, timing t)
{
    int points = 0;
    for (long i = 0; i < n; i++) {
        int timed, c = mg_online_next(&k[0], p, &timed), decided = -1;
        for (int r = 0; r < RANKS; r++) {
            int cr, tr;
            cr = mg_online_next(&k[r], p, &tr);
            EXPECT(cr == c && tr == timed); /* every rank runs the same implementation */
            int point = mg_online_done(&k[r], p, cr, t(r, cr, i));
            EXPECT(decided < 0 || point == decided); /* and reaches the same decision points */
            decided = point;
        }
        if (!decided) continue;
        points++;
        double agreed[MG_ONLINE_MAX], mine[MG_ONLINE_MAX];
        int m = mg_online_to_agree(&k[0], p, agreed);
        for (int r = 1; r < RANKS; r++) {
            EXPECT(mg_online_to_agree(&k[r], p, mine) == m);
            for (int j = 0; j < m; j++) agreed[j] = fmax(agreed[j], mine[j]);
        }
        for (int r = 0; r < RANKS; r++) mg_online_decide(&k[r], p, agreed);
    }
    for (int r = 1; r < RANKS; r++) EXPECT(k[r].phase == k[0].phase && k[r].chosen == k[0].chosen);
    return points;
}

static void init(mg_online_key *k, int n)
{
    int impl[MG_ONLINE_MAX] = {0, 1, 2, 3, 4, 5, 6, 7};
    for (int r = 0; r < RANKS; r++) mg_online_init(&k[r], impl, n, NULL);
}

static const double base[4] = {1.0e-5, 0.6e-5, 0.8e-5, 3.0e-5}; /* candidate 1 fastest, 3 five times slower */
static double steady(int r, int c, long i) { return (void)r, (void)i, base[c] * noise(); }

static void settles_on_the_fastest_within_its_caps(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_default_policy;
    init(k, 4);
    int points = simulate(k, p, 2000, steady);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 1);
    EXPECT(k[0].explorations == 1);
    /* first look after 2 rounds of 4; candidate 3 (x3) is dropped there, the rest explore 3 more rounds */
    EXPECT(k[0].count[3] == p->first_look);
    EXPECT(k[0].explore_calls == (uint64_t)(4 * p->first_look + 3 * (p->rounds - p->first_look)));
    EXPECT(k[0].served[0] >= (uint64_t)p->warmup);
    /* 2 decision points of the exploration, then one per window of the settled key */
    EXPECT(points == 2 + (int)((2000 - p->warmup - k[0].explore_calls) / (uint64_t)p->window));
}

static void a_rare_key_never_explores(void)
{
    mg_online_key k[RANKS];
    init(k, 4);
    const mg_online_policy *p = &mg_online_default_policy;
    simulate(k, p, p->warmup - 1, steady);
    EXPECT(k[0].phase == MG_ONLINE_WARMUP && k[0].served[0] == (uint64_t)p->warmup - 1 && k[0].explore_calls == 0);
}

static void one_candidate_settles_without_exploring(void)
{
    mg_online_key k[RANKS];
    init(k, 1);
    simulate(k, &mg_online_default_policy, 100, steady);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 0 && k[0].explore_calls == 0);
}

/* Each rank sees another candidate fastest: the one whose slowest rank is fastest wins, on every rank. */
static double disagreeing(int r, int c, long i)
{
    (void)i;
    static const double t[RANKS][3] = {{1.0, 0.3, 0.7}, {1.0, 0.9, 0.3}, {1.0, 0.35, 0.6}, {1.0, 0.4, 0.5}};
    return 1e-5 * t[r][c] * noise();
}

static void ranks_agree_when_their_times_disagree(void)
{
    mg_online_key k[RANKS];
    init(k, 3);
    simulate(k, &mg_online_default_policy, 500, disagreeing);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 2); /* max over ranks: 1.0, 0.9, 0.7 */
}

/* The fastest candidate's calls are preempted now and then on one rank (x50, one call in 4): the
 * medians still choose it, and its settled windows do not make the key explore again. */
static double preempted(int r, int c, long i)
{
    double spike = r == 2 && c == 1 && i % 4 == 1 ? 50.0 : 1.0;
    return base[c] * spike * noise();
}

static void a_preempted_call_does_not_decide(void)
{
    mg_online_key k[RANKS];
    init(k, 3);
    simulate(k, &mg_online_default_policy, 3000, preempted);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 1 && k[0].explorations == 1);
}

/* One candidate far ahead of the others: the first look settles on it, the first window of its calls is
 * its baseline, and steady times never make the key explore again. */
static const double far[3] = {1.0e-5, 0.3e-5, 5.0e-5};
static double far_ahead(int r, int c, long i) { return (void)r, (void)i, far[c] * noise(); }

static void settled_at_the_first_look(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_default_policy;
    init(k, 3);
    simulate(k, p, 4000, far_ahead);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 1 && k[0].explorations == 1);
    EXPECT(k[0].explore_calls == (uint64_t)(3 * p->first_look));
    EXPECT(k[0].chosen_s > 0.25e-5 && k[0].chosen_s < 0.35e-5); /* the first window's median */
}

/* A communicator's budget: the first key's exploration takes 4 candidates x 5 rounds of 30 calls; the
 * second key cannot afford its own and runs natively; every rank's budget is spent alike. */
static void the_budget_bounds_a_communicators_exploration(void)
{
    const mg_online_policy *p = &mg_online_default_policy;
    uint64_t budget[RANKS];
    mg_online_key a[RANKS], b[RANKS];
    int impl[4] = {0, 1, 2, 3};
    for (int r = 0; r < RANKS; r++) {
        budget[r] = 30;
        mg_online_init(&a[r], impl, 4, &budget[r]);
        mg_online_init(&b[r], impl, 4, &budget[r]);
    }
    simulate(a, p, 500, steady);
    simulate(b, p, 500, steady);
    EXPECT(a[0].phase == MG_ONLINE_SETTLED && a[0].chosen == 1 && !a[0].over_budget);
    EXPECT(b[0].phase == MG_ONLINE_SETTLED && b[0].chosen == 0 && b[0].explore_calls == 0 && b[0].over_budget);
    for (int r = 0; r < RANKS; r++) EXPECT(budget[r] == 10);
}

/* Candidate 1 is fastest until `changed`, then 4 times slower: the key explores again and takes 2. */
static int changed;
static double changing(int r, int c, long i)
{
    (void)r, (void)i;
    return base[c] * (c == 1 && changed ? 4.0 : 1.0) * noise();
}

static void a_change_is_noticed_and_explored_again(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_default_policy;
    init(k, 4);
    simulate(k, p, 3000, changing);
    EXPECT(k[0].chosen == 1 && k[0].explorations == 1);
    changed = 1;
    simulate(k, p, 3000, changing);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 2 && k[0].explorations == 2);
}

/* The settled choice's time doubles every window: the key explores again at most max_explorations times. */
static long growth_calls;
static double growing(int r, int c, long i)
{
    (void)r, (void)i;
    growth_calls++;
    return base[c] * pow(2.0, (double)growth_calls / (RANKS * 200.0)) * noise();
}

static void re_exploration_is_bounded(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_default_policy;
    init(k, 4);
    simulate(k, p, 20000, growing);
    EXPECT(k[0].explorations == p->max_explorations && k[0].phase == MG_ONLINE_SETTLED);
}

/* A point-to-point side: its time runs until the call that completes it, with its peer's side. The peer's
 * key still runs the native call (its warm-up, 5 times slower) during this key's first `peer_native`
 * calls. */
static const double side_base[3] = {3.0e-5, 0.8e-5, 0.6e-5}; /* native, normalized, pack */
static long peer_native;
static double peer_warming(int r, int c, long i)
{
    (void)r;
    return fmax(side_base[c], i < peer_native ? side_base[0] : 0.0) * noise();
}

/* The peer warms up during most of the first exploration: only its last round takes the candidates' own
 * times. The sides' policy decides by each candidate's fastest call and finds the fastest (pack, 2) at
 * once; the look again, at 4 times the calls, finds it again; the first window after it is the baseline,
 * so the steady calls do not make it explore a third time. */
static void a_side_decides_by_its_fastest_call(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_side_policy;
    init(k, 3);
    peer_native = 20;
    int points = simulate(k, p, 200, peer_warming);
    /* the first exploration's two looks, the look again, the second exploration's two looks */
    EXPECT(k[0].explorations == 2 && points == 5 && k[0].look_again_at == 0);
    simulate(k, p, 3000, peer_warming);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 2 && k[0].explorations == 2);
    EXPECT(k[0].agreed[2] < 0.7e-5 && k[0].agreed[0] > 2.5e-5); /* the fastest calls: pack's own, native's */
    EXPECT(k[0].chosen_s > 0.5e-5 && k[0].chosen_s < 0.7e-5); /* the first window's median */
}

/* The peer warms up during the whole first exploration: every candidate took the native time, and the
 * first choice is noise. The look again, with the peer settled, finds pack. */
static void a_side_looks_again_once_its_peer_has_settled(void)
{
    mg_online_key k[RANKS];
    const mg_online_policy *p = &mg_online_side_policy;
    init(k, 3);
    peer_native = 40;
    simulate(k, p, 3000, peer_warming);
    EXPECT(k[0].phase == MG_ONLINE_SETTLED && k[0].chosen == 2 && k[0].explorations == 2);
    EXPECT(k[0].served[2] > 2800);
}

int main(void)
{
    settles_on_the_fastest_within_its_caps();
    a_rare_key_never_explores();
    one_candidate_settles_without_exploring();
    ranks_agree_when_their_times_disagree();
    a_preempted_call_does_not_decide();
    the_budget_bounds_a_communicators_exploration();
    settled_at_the_first_look();
    a_change_is_noticed_and_explored_again();
    re_exploration_is_bounded();
    a_side_decides_by_its_fastest_call();
    a_side_looks_again_once_its_peer_has_settled();
    printf("test_tune_online: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
