// SPDX-License-Identifier: MIT
// A host's filter arrays against world.h's width check: 64-bit filter bits compile, and with
// -DBITS_TYPE=uint32_t (the width before 0.7) the call must not compile. With
// -DDEPRECATED_NAMES the same calls go through the bulk setters before 0.8, which keep the check.
#define BP_NO_DEPRECATION_WARNINGS
#include <broadphase/broadphase.h>

#ifndef BITS_TYPE
#define BITS_TYPE uint64_t
#endif

bp_status set_teams(bp_world *world, const bp_entity *handles, const uint32_t *dense);

#ifndef DEPRECATED_NAMES
bp_status set_teams(bp_world *world, const bp_entity *handles, const uint32_t *dense)
{
	BITS_TYPE category[2] = {1, 2}, mask[2] = {2, 1};
	bp_status s = bp_entities_set_filters(world, bp_target_range(0, 2), category, mask);
	if (s == BP_OK)
		s = bp_entities_set_filters(world, bp_target_indices(2, dense), category, mask);
	if (s == BP_OK)
		s = bp_entities_set_filters(world, bp_target_handles(2, handles), category, NULL);
	return s;
}
#else
bp_status set_teams(bp_world *world, const bp_entity *handles, const uint32_t *dense)
{
	BITS_TYPE category[2] = {1, 2}, mask[2] = {2, 1};
	bp_status s = bp_world_set_filters(world, 0, 2, category, mask);
	if (s == BP_OK)
		s = bp_world_set_filters_indexed(world, 2, dense, category, mask);
	if (s == BP_OK)
		s = bp_world_set_filters_by_handle(world, 2, handles, category, NULL);
	return s;
}
#endif
