/*
 * nameset — set of names with FIFO order; see nameset.h.
 */
#include "core/nameset.h"

#include <stdlib.h>
#include <string.h>

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a 64 */

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

int
nameset_init(struct nameset *ns)
{
	memset(ns, 0, sizeof(*ns));
	ns->nbucket = 1024;
	ns->bucket = calloc(ns->nbucket, sizeof(*ns->bucket));
	return ns->bucket != NULL ? 0 : -1;
}

void
nameset_fini(struct nameset *ns)
{
	struct nameset_node *n, *next;

	if (ns == NULL || ns->bucket == NULL)
		return;
	for (n = ns->head; n != NULL; n = next) {
		next = n->fnext;
		free(n);
	}
	free(ns->bucket);
	memset(ns, 0, sizeof(*ns));
}

static void
grow(struct nameset *ns)
{
	size_t nb = ns->nbucket * 2;
	struct nameset_node **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return;		/* keep working with longer chains */
	for (struct nameset_node *n = ns->head; n != NULL; n = n->fnext) {
		size_t i = hash(n->name) & (nb - 1);

		n->hnext = b[i];
		b[i] = n;
	}
	free(ns->bucket);
	ns->bucket = b;
	ns->nbucket = nb;
}

struct nameset_node *
nameset_find(const struct nameset *ns, const char *name)
{
	struct nameset_node *n = ns->bucket[hash(name) & (ns->nbucket - 1)];

	for (; n != NULL; n = n->hnext)
		if (strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

/* Whether (key, name) comes before node o: a smaller key, or the same
 * key and a smaller name (file times are coarse: the kernel's tick). */
static int
ordered_before(int64_t key, const char *name, const struct nameset_node *o)
{
	return key < o->key || (key == o->key && strcmp(name, o->name) < 0);
}

/* Nodes of its level a new node walks back over to find its place by
 * (key, name) (past them it stays there: a long unordered backlog costs
 * O(LEVEL_WALK) per name, as nameset_add_ordered's maxwalk). */
#define LEVEL_WALK	4096

/* Put n into the list of its priority level, after the last node not
 * after it by (key, name): first of the level when before its head,
 * else walking back from the level's tail.  Only in a set with levels
 * (ns->levels); elsewhere nothing, O(1). */
static void
level_insert(struct nameset *ns, struct nameset_node *n)
{
	struct nameset_node *p = ns->ltail[n->prio];
	size_t walked = 0;

	if (!ns->levels)
		return;

	if (p != NULL && ordered_before(n->key, n->name, ns->lhead[n->prio]))
		p = NULL;
	while (p != NULL && walked < LEVEL_WALK &&
	    ordered_before(n->key, n->name, p)) {
		p = p->lprev;
		walked++;
	}
	n->lprev = p;
	n->lnext = p != NULL ? p->lnext : ns->lhead[n->prio];
	if (n->lnext != NULL)
		n->lnext->lprev = n;
	else
		ns->ltail[n->prio] = n;
	if (p != NULL)
		p->lnext = n;
	else
		ns->lhead[n->prio] = n;
}

/* Take n out of the list of its priority level. */
static void
level_remove(struct nameset *ns, struct nameset_node *n)
{
	if (!ns->levels)
		return;
	if (n->lprev != NULL)
		n->lprev->lnext = n->lnext;
	else
		ns->lhead[n->prio] = n->lnext;
	if (n->lnext != NULL)
		n->lnext->lprev = n->lprev;
	else
		ns->ltail[n->prio] = n->lprev;
	n->lprev = n->lnext = NULL;
}

/* nameset_add with the new node's key given, so that its level places
 * it once. */
static struct nameset_node *
add_node(struct nameset *ns, const char *name, int64_t key, int *added)
{
	struct nameset_node *n = nameset_find(ns, name);
	size_t len, i;

	if (added != NULL)
		*added = 0;
	if (n != NULL)
		return n;
	len = strlen(name);
	n = malloc(sizeof(*n) + len + 1);
	if (n == NULL)
		return NULL;
	memcpy(n->name, name, len + 1);
	n->key = key;
	n->flags = 0;
	n->prio = PRIORITY_DEFAULT;
	n->flow = FAIR_LOCAL;
	if (ns->fair != NULL)
		fair_enter(ns->fair, FAIR_LOCAL);
	n->fnext = NULL;
	if (ns->count + 1 > ns->nbucket * 2)
		grow(ns);
	i = hash(name) & (ns->nbucket - 1);
	n->hnext = ns->bucket[i];
	ns->bucket[i] = n;
	n->fprev = ns->tail;
	if (ns->tail != NULL)
		ns->tail->fnext = n;
	else
		ns->head = n;
	ns->tail = n;
	ns->count++;
	level_insert(ns, n);
	if (added != NULL)
		*added = 1;
	return n;
}

struct nameset_node *
nameset_add(struct nameset *ns, const char *name, int *added)
{
	return add_node(ns, name, 0, added);
}

struct nameset_node *
nameset_add_ordered(struct nameset *ns, const char *name, int64_t key,
    size_t maxwalk, int *added)
{
	struct nameset_node *tail = ns->tail, *n, *p;
	int fresh = 0;
	size_t walked = 0;

	if (added != NULL)
		*added = 0;
	n = add_node(ns, name, key, &fresh);
	if (n == NULL || !fresh)
		return n;
	if (added != NULL)
		*added = 1;
	if (tail == NULL || !ordered_before(key, name, tail))
		return n;		/* in order: stays at the tail */
	/* The first node of larger (key, name), from the head. */
	for (p = ns->head; p != n && walked < maxwalk; walked++) {
		if (ordered_before(key, name, p))
			break;
		p = p->fnext;
	}
	if (p == n || walked >= maxwalk)
		return n;		/* too far back: left at the tail */
	/* Detach it from the tail (tail->fnext is n), insert before p. */
	tail->fnext = NULL;
	ns->tail = tail;
	n->fprev = p->fprev;
	n->fnext = p;
	if (p->fprev != NULL)
		p->fprev->fnext = n;
	else
		ns->head = n;
	p->fprev = n;
	return n;
}

static void
unhash(struct nameset *ns, struct nameset_node *n)
{
	struct nameset_node **pp = &ns->bucket[hash(n->name) &
	    (ns->nbucket - 1)];

	for (; *pp != NULL; pp = &(*pp)->hnext)
		if (*pp == n) {
			*pp = n->hnext;
			return;
		}
}

/* Take n out of every list of ns (the hash chain, the order, its level,
 * its flow); the caller frees or returns it. */
static void
detach(struct nameset *ns, struct nameset_node *n)
{
	unhash(ns, n);
	if (n->fprev != NULL)
		n->fprev->fnext = n->fnext;
	else
		ns->head = n->fnext;
	if (n->fnext != NULL)
		n->fnext->fprev = n->fprev;
	else
		ns->tail = n->fprev;
	level_remove(ns, n);
	ns->count--;
	if (ns->fair != NULL)
		fair_leave(ns->fair, n->flow);
	n->fnext = n->fprev = n->hnext = NULL;
}

int
nameset_remove(struct nameset *ns, const char *name)
{
	struct nameset_node *n = nameset_find(ns, name);

	if (n == NULL)
		return -1;
	detach(ns, n);
	free(n);
	return 0;
}

struct nameset_node *
nameset_pop(struct nameset *ns)
{
	struct nameset_node *n = ns->head;

	if (n != NULL)
		detach(ns, n);
	return n;
}

void
nameset_set_prio(struct nameset *ns, struct nameset_node *c, int prio)
{
	if (prio < PRIORITY_MIN)
		prio = PRIORITY_MIN;
	if (prio > PRIORITY_MAX)
		prio = PRIORITY_MAX;
	if (prio == c->prio)
		return;		/* placed already */
	level_remove(ns, c);
	c->prio = prio;
	level_insert(ns, c);
}

void
nameset_set_flow(struct nameset *ns, struct nameset_node *c, int i)
{
	if (i < 0 || i >= FAIR_FLOWS_MAX)
		return;
	if (ns->fair == NULL) {
		c->flow = i;	/* a value kept for the caller */
		return;
	}
	if ((size_t)i >= ns->fair->n)
		return;
	fair_leave(ns->fair, c->flow);
	c->flow = i;
	fair_enter(ns->fair, i);
}

/* Whether p is claimed before best (nameset_pop_priority's order). */
static int
better(const struct nameset *ns, const struct nameset_node *p,
    const struct nameset_node *best, int64_t now_ms, int64_t aging_ms)
{
	int ep, eb;

	if (ns->fair == NULL || p->flow == best->flow)
		return priority_before(p->prio, p->key, best->prio, best->key,
		    now_ms, aging_ms);
	ep = priority_effective(p->prio, p->key, now_ms, aging_ms);
	eb = priority_effective(best->prio, best->key, now_ms, aging_ms);
	if (ep != eb)
		return ep > eb;
	if (fair_before(ns->fair, p->flow, best->flow))
		return 1;
	if (fair_before(ns->fair, best->flow, p->flow))
		return 0;
	return p->key < best->key;
}

/* Whether the nodes of ns have more than one priority. */
static int
mixed(const struct nameset *ns)
{
	int levels = 0;

	for (int i = PRIORITY_MIN; i <= PRIORITY_MAX; i++)
		if (ns->lhead[i] != NULL && ++levels > 1)
			return 1;
	return 0;
}

struct nameset_node *
nameset_pop_priority(struct nameset *ns, size_t maxwalk, int64_t now_ms,
    int64_t aging_ms)
{
	struct nameset_node *best = NULL, *p;
	size_t walked = 1;

	if (ns->head == NULL || (!mixed(ns) && (ns->fair == NULL ||
	    ns->fair->backlogged < 2))) {
		best = nameset_pop(ns);	/* one priority, one flow */
		if (best != NULL && ns->fair != NULL)
			fair_served(ns->fair, best->flow);
		return best;
	}
	if (ns->fair == NULL || ns->fair->backlogged < 2) {
		/* One flow: the oldest of each level is the first of its
		 * level (aging only raises it), so the heads decide. */
		for (int l = PRIORITY_MAX; l >= PRIORITY_MIN; l--)
			if ((p = ns->lhead[l]) != NULL && (best == NULL ||
			    better(ns, p, best, now_ms, aging_ms)))
				best = p;
	} else {
		best = ns->head;
		for (p = best->fnext; p != NULL && walked < maxwalk;
		    p = p->fnext, walked++)
			if (better(ns, p, best, now_ms, aging_ms))
				best = p;
	}
	detach(ns, best);
	if (ns->fair != NULL)
		fair_served(ns->fair, best->flow);
	return best;
}
