// SPDX-License-Identifier: MIT
// The public header compiled as C++: types, enums and extern "C" linkage.
#include <broadphase/broadphase.h>
#include <cstdio>

int main()
{
	bp_world_def def = bp_world_def_default();
	def.dims = 2;
	bp_world *world = nullptr;
	if (bp_world_create(&def, &world) != BP_OK)
		return 1;
	bp_entity_def a = bp_entity_def_default();
	a.max[0] = a.max[1] = 2.0f;
	bp_entity_def b = bp_entity_def_default();
	b.min[0] = b.min[1] = 2.0f; // touches a at the corner (2, 2): closed intervals overlap
	b.max[0] = b.max[1] = 3.0f;
	bp_entity ha{}, hb{};
	bool ok = bp_entity_create(world, &a, &ha) == BP_OK && bp_entity_create(world, &b, &hb) == BP_OK &&
		bp_world_step(world) == BP_OK;
	size_t count = 0;
	bp_world_pairs(world, &count);
	ok = ok && count == 1;
	std::printf("consumer_cxx: pairs=%zu%s\n", count, ok ? " ok" : " WRONG");
	bp_world_destroy(world);
	return ok ? 0 : 1;
}
