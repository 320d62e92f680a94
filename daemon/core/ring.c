/*
 * ring — consistent hashing with virtual nodes; see ring.h.
 */
#include "core/ring.h"

#include <errno.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point {
	uint64_t h;
	size_t node;		/* index into ids */
};

struct ring {
	char (*ids)[RING_NODE_MAX + 1];
	size_t nids;
	struct point *pts;
	size_t npts;
};

uint64_t
ring_hash(const char *s)
{
	unsigned char d[SHA256_DIGEST_LENGTH];
	uint64_t h = 0;

	SHA256((const unsigned char *)s, strlen(s), d);
	for (int i = 0; i < 8; i++)
		h = h << 8 | d[i];
	return h;
}

static int
point_cmp(const void *a, const void *b, void *arg)
{
	const struct point *p = a, *q = b;
	const struct ring *r = arg;

	if (p->h != q->h)
		return p->h < q->h ? -1 : 1;
	return strcmp(r->ids[p->node], r->ids[q->node]);
}

struct ring *
ring_new(const char *const *nodes, size_t n, int vnodes)
{
	struct ring *r;
	char label[RING_NODE_MAX + 16];

	if (vnodes < 1 || vnodes > 4096) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		if (strlen(nodes[i]) > RING_NODE_MAX) {
			errno = EINVAL;
			return NULL;
		}
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->ids = calloc(n > 0 ? n : 1, sizeof(*r->ids));
	r->pts = calloc(n > 0 ? n * (size_t)vnodes : 1, sizeof(*r->pts));
	if (r->ids == NULL || r->pts == NULL) {
		ring_free(r);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		int dup = 0;

		for (size_t j = 0; j < r->nids; j++)
			if (strcmp(r->ids[j], nodes[i]) == 0)
				dup = 1;
		if (dup)
			continue;
		snprintf(r->ids[r->nids], sizeof(r->ids[0]), "%s", nodes[i]);
		for (int v = 0; v < vnodes; v++) {
			snprintf(label, sizeof(label), "%s#%d", nodes[i], v);
			r->pts[r->npts].h = ring_hash(label);
			r->pts[r->npts].node = r->nids;
			r->npts++;
		}
		r->nids++;
	}
	qsort_r(r->pts, r->npts, sizeof(*r->pts), point_cmp, r);
	return r;
}

void
ring_free(struct ring *r)
{
	if (r == NULL)
		return;
	free(r->ids);
	free(r->pts);
	free(r);
}

const char *
ring_lookup(const struct ring *r, const char *key)
{
	uint64_t h = ring_hash(key);
	size_t lo = 0, hi = r->npts;

	if (r->npts == 0)
		return NULL;
	while (lo < hi) {		/* first point with p.h >= h */
		size_t mid = lo + (hi - lo) / 2;

		if (r->pts[mid].h < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	return r->ids[r->pts[lo == r->npts ? 0 : lo].node];
}
