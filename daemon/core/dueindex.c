/*
 * dueindex — names with due times on a timing wheel; see dueindex.h.
 */
#include "core/dueindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/wheel.h"

struct due_node {
	struct wheel_entry we;		/* first: the wheel's link */
	struct due_node *hnext;		/* hash chain */
	uint64_t due;			/* copy: valid after firing too */
	unsigned char len;
	char name[];
};

struct due_index {
	struct wheel *w;
	struct due_node **bucket;
	size_t nbucket, count;
	struct due_node *fired;		/* during expire: fired, in order */
	struct due_node **fired_tail;
};

static uint64_t
hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a 64 */

	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

struct due_index *
due_index_new(uint64_t now_ms)
{
	struct due_index *di = calloc(1, sizeof(*di));

	if (di == NULL)
		return NULL;
	di->nbucket = 1024;
	di->bucket = calloc(di->nbucket, sizeof(*di->bucket));
	di->w = wheel_new(now_ms);
	if (di->bucket == NULL || di->w == NULL) {
		due_index_free(di);
		errno = ENOMEM;
		return NULL;
	}
	return di;
}

void
due_index_free(struct due_index *di)
{
	if (di == NULL)
		return;
	for (size_t i = 0; di->bucket != NULL && i < di->nbucket; i++) {
		struct due_node *n = di->bucket[i], *next;

		for (; n != NULL; n = next) {
			next = n->hnext;
			free(n);
		}
	}
	free(di->bucket);
	wheel_free(di->w);
	free(di);
}

static struct due_node **
slot_of(const struct due_index *di, const char *name)
{
	struct due_node **pp = &di->bucket[hash(name) & (di->nbucket - 1)];

	while (*pp != NULL && strcmp((*pp)->name, name) != 0)
		pp = &(*pp)->hnext;
	return pp;
}

static void
grow(struct due_index *di)
{
	size_t nb = di->nbucket * 2;
	struct due_node **b = calloc(nb, sizeof(*b));

	if (b == NULL)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < di->nbucket; i++) {
		struct due_node *n = di->bucket[i], *next;

		for (; n != NULL; n = next) {
			size_t j = hash(n->name) & (nb - 1);

			next = n->hnext;
			n->hnext = b[j];
			b[j] = n;
		}
	}
	free(di->bucket);
	di->bucket = b;
	di->nbucket = nb;
}

int
due_index_set(struct due_index *di, const char *name, uint64_t due_ms)
{
	struct due_node **pp = slot_of(di, name), *n = *pp;
	size_t len = strlen(name);

	if (n != NULL) {
		wheel_cancel(di->w, &n->we);
		n->due = due_ms;
		wheel_insert(di->w, &n->we, due_ms);
		return 0;
	}
	if (len > 255) {
		errno = ENAMETOOLONG;
		return -1;
	}
	n = malloc(sizeof(*n) + len + 1);
	if (n == NULL)
		return -1;
	wheel_entry_init(&n->we);
	n->len = (unsigned char)len;
	memcpy(n->name, name, len + 1);
	n->due = due_ms;
	n->hnext = NULL;
	*pp = n;
	di->count++;
	wheel_insert(di->w, &n->we, due_ms);
	if (di->count > di->nbucket)
		grow(di);
	return 0;
}

int
due_index_remove(struct due_index *di, const char *name)
{
	struct due_node **pp = slot_of(di, name), *n = *pp;

	if (n == NULL) {
		errno = ENOENT;
		return -1;
	}
	*pp = n->hnext;
	wheel_cancel(di->w, &n->we);
	di->count--;
	free(n);
	return 0;
}

/* Wheel callback: unhash the node and queue it on the fired list. */
static void
on_fire(struct wheel_entry *e, void *arg)
{
	struct due_index *di = arg;
	struct due_node *n = WHEEL_ENTRY_OWNER(e, struct due_node, we);
	struct due_node **pp = slot_of(di, n->name);

	if (*pp == n)
		*pp = n->hnext;
	di->count--;
	n->hnext = NULL;
	*di->fired_tail = n;
	di->fired_tail = &n->hnext;
}

size_t
due_index_expire(struct due_index *di, uint64_t now_ms,
    void (*fire)(const char *name, uint64_t due_ms, void *arg), void *arg)
{
	struct due_node *n, *next;
	size_t k = 0;

	di->fired = NULL;
	di->fired_tail = &di->fired;
	wheel_advance(di->w, now_ms, on_fire, di);
	for (n = di->fired; n != NULL; n = next) {
		next = n->hnext;
		fire(n->name, n->due, arg);
		free(n);
		k++;
	}
	di->fired = NULL;
	return k;
}

int
due_index_next(const struct due_index *di, uint64_t *due_ms)
{
	return wheel_next_due(di->w, due_ms);
}

size_t
due_index_count(const struct due_index *di)
{
	return di->count;
}
