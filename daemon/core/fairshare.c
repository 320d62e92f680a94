/*
 * fairshare — start-time fair queueing over a daemon's flows; see
 * fairshare.h.
 */
#include "core/fairshare.h"

#include <stdio.h>
#include <string.h>

static int
clamp_weight(int w)
{
	return w < 1 ? 1 : w > FAIR_WEIGHT_MAX ? FAIR_WEIGHT_MAX : w;
}

void
fair_init(struct fairshare *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->flow[FAIR_LOCAL].name, FAIR_NAME_MAX, "local");
	f->flow[FAIR_LOCAL].weight = 1;
	f->n = 1;
}

int
fair_flow_of(struct fairshare *f, const char *name, int weight)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strncmp(f->flow[i].name, name, FAIR_NAME_MAX - 1) == 0) {
			if (i != FAIR_FLOWS_MAX - 1)
				f->flow[i].weight = clamp_weight(weight);
			return (int)i;
		}
	if (f->n == FAIR_FLOWS_MAX)
		return FAIR_FLOWS_MAX - 1;
	i = f->n++;
	if (i == FAIR_FLOWS_MAX - 1)
		snprintf(f->flow[i].name, FAIR_NAME_MAX, "(other)");
	else
		snprintf(f->flow[i].name, FAIR_NAME_MAX, "%s", name);
	f->flow[i].weight = i == FAIR_FLOWS_MAX - 1 ? 1 :
	    clamp_weight(weight);
	f->flow[i].vtime = f->vclock;
	f->flow[i].queued = 0;
	return (int)i;
}

void
fair_enter(struct fairshare *f, int i)
{
	struct fair_flow *fl = &f->flow[i];

	if (fl->queued++ == 0) {
		f->backlogged++;
		if (fl->vtime < f->vclock)
			fl->vtime = f->vclock;	/* no credit for idleness */
	}
}

void
fair_leave(struct fairshare *f, int i)
{
	struct fair_flow *fl = &f->flow[i];

	if (fl->queued > 0 && --fl->queued == 0)
		f->backlogged--;
}

int
fair_before(const struct fairshare *f, int a, int b)
{
	return f->flow[a].vtime < f->flow[b].vtime;
}

void
fair_served(struct fairshare *f, int i)
{
	struct fair_flow *fl = &f->flow[i];

	f->vclock = fl->vtime;
	fl->vtime += FAIR_SCALE / (uint64_t)fl->weight;
}
