// SPDX-License-Identifier: MIT
// Smallest host program: two overlapping boxes and one far away must give exactly one pair.
#include <broadphase/broadphase.h>
#include <stdio.h>

int main(void)
{
	bp_world_def def = bp_world_def_default();
	bp_world *world = NULL;
	if (bp_world_create(&def, &world) != BP_OK)
		return 1;
	// [0,2]^3 and [1,3]^3 overlap on [1,2]^3; [10,11]^3 touches neither.
	const float boxes[3][6] = {{0, 0, 0, 2, 2, 2}, {1, 1, 1, 3, 3, 3}, {10, 10, 10, 11, 11, 11}};
	for (int i = 0; i < 3; ++i) {
		bp_entity_def e = bp_entity_def_default();
		for (int k = 0; k < 3; ++k) {
			e.min[k] = boxes[i][k];
			e.max[k] = boxes[i][3 + k];
		}
		bp_entity handle;
		if (bp_entity_create(world, &e, &handle) != BP_OK) {
			fprintf(stderr, "create: %s\n", bp_world_last_error(world));
			return 1;
		}
	}
	bp_status status = bp_world_step(world);
	size_t count = 0;
	const bp_pair *pairs = bp_world_pairs(world, &count);
	int ok = status == BP_OK && count == 1 && pairs[0].lo == 0 && pairs[0].hi == 1;
	printf("consumer: status=%s pairs=%zu%s\n", bp_status_string(status), count, ok ? " ok" : " WRONG");
	bp_world_destroy(world);
	return ok && bp_allocated_bytes() == 0 ? 0 : 1;
}
