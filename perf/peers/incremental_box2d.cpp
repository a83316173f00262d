// SPDX-License-Identifier: MIT
// bp_peer_incremental: the 2D static_moving workload of perf/incremental.c through Box2D v3's
// broadphase scheme (rebuilt on Box2D 2.4's public b2DynamicTree) and through an incremental
// broadphase world, on the same frames, interleaved; checks that both find the same pairs.
#include "peer_clock.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <vector>

#include <box2d/b2_collision.h>
#include <box2d/b2_common.h>
#include <box2d/b2_dynamic_tree.h>

#include <broadphase/broadphase.h>
#include <bp_scene.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

/// Box2D v3's margins, in meters (its b2_aabbMargin and B2_SPECULATIVE_DISTANCE = 4 * 0.005):
/// moving shapes are fattened by 0.1 (equal to 2.4's b2_aabbExtension), static shapes by 0.02.
constexpr float v3_static_margin = 0.02f;

struct options {
	uint32_t n_static = 1000000, n_moving = 10000;
	uint32_t frames = 15;
	uint32_t warmup = 2;          ///< untimed frames first
	int threads = 1;
	uint64_t seed = 1;
	const char *csv = nullptr;
	uint32_t check = 3;           ///< frames compared, warm-up frames first; UINT32_MAX: all
	float b2_margin = b2_aabbExtension; ///< the movers' fat margin on the Box2D side (>= 0.1)
	bool displacement = false;    ///< pass each frame's motion to MoveProxy (2.4's prediction)
	bool static_fat_tree = false; ///< statics keep CreateProxy's b2_aabbExtension, not v3's 0.02
	float bp_margin = 0.0f;       ///< bp_world_def.margin (0: chosen by the world)
};

double median_of(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// Runs fn(begin, end, t) on `threads` threads over [0, n) cut in contiguous chunks, chunk t on
/// thread t, so that merging per-thread output in t order is deterministic.
template <typename F> void parallel_chunks(size_t n, int threads, F fn)
{
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
	{
		size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
		fn(n * t / nt, n * (t + 1) / nt, t);
	}
#else
	for (int t = 0; t < threads; ++t)
		fn(n * t / threads, n * (t + 1) / threads, (size_t)t);
#endif
}

inline uint64_t key_of(uint32_t lo, uint32_t hi)
{
	return (uint64_t)lo << 32 | hi;
}

/// The candidate pairs by key (lo << 32 | hi): open addressing, linear probing, backward-shift
/// deletion, as Box2D v3's b2HashSet. Key 0 marks an empty slot (lo < hi, so no pair has it).
class pair_set {
public:
	bool contains(uint64_t key) const
	{
		for (size_t i = hash(key) & mask_;; i = (i + 1) & mask_) {
			if (keys_[i] == key)
				return true;
			if (keys_[i] == 0)
				return false;
		}
	}

	/// False when the key was already there.
	bool insert(uint64_t key)
	{
		if (2 * (count_ + 1) > keys_.size())
			grow();
		size_t i = hash(key) & mask_;
		for (; keys_[i] != 0; i = (i + 1) & mask_)
			if (keys_[i] == key)
				return false;
		keys_[i] = key;
		++count_;
		return true;
	}

	void erase(uint64_t key)
	{
		size_t i = hash(key) & mask_;
		for (; keys_[i] != key; i = (i + 1) & mask_)
			if (keys_[i] == 0)
				return;
		// Shift back every later key of the run that may live in the hole: one whose home
		// slot is not cyclically in (hole, its slot].
		for (size_t j = (i + 1) & mask_; keys_[j] != 0; j = (j + 1) & mask_) {
			size_t home = hash(keys_[j]) & mask_;
			if (((j - home) & mask_) >= ((j - i) & mask_)) {
				keys_[i] = keys_[j];
				i = j;
			}
		}
		keys_[i] = 0;
		--count_;
	}

	size_t size() const { return count_; }

private:
	static size_t hash(uint64_t k)
	{
		k ^= k >> 33;
		k *= 0xff51afd7ed558ccdull;
		k ^= k >> 33;
		return (size_t)k;
	}

	void grow()
	{
		std::vector<uint64_t> old(keys_.size() * 2, 0);
		old.swap(keys_);
		mask_ = keys_.size() - 1;
		count_ = 0;
		for (uint64_t k : old)
			if (k)
				insert(k);
	}

	std::vector<uint64_t> keys_ = std::vector<uint64_t>(1024, 0);
	size_t mask_ = 1023;
	size_t count_ = 0;
};

/// Box2D v3's broadphase scheme on the 2.4 tree: a static tree, a tree of the movers' fat
/// boxes, a re-query of the movers whose box left its fat box, and a persistent candidate set
/// re-tested exactly every frame. Scene entities [0, first) are static, [first, n) move.
class box2d_scheme {
public:
	box2d_scheme(const options &o, const bp_scene *scene, uint32_t first)
		: o_(o), scene_(scene), first_(first), moving_(scene->count - first),
		  pad_(o.displacement ? 0.0f : o.b2_margin - b2_aabbExtension), mover_proxy_(moving_),
		  reinserted_(moving_, 1), found_(o.threads), exact_(o.threads)
	{
		// CreateProxy and MoveProxy fatten the box they are given by b2_aabbExtension (0.1). v3
		// fattens statics by 0.02 only, so statics go in shrunk by the difference (never past
		// their centre: the fat box still holds the true box), and movers go in grown by
		// --b2-margin less 0.1. Statics are inserted in Morton order of their centres: 2.4's
		// greedy insertion then builds a tree that 1M-box queries visit half as much of (182
		// nodes against 384 for scene order, 13 against 48 us per query on this machine),
		// closer to what v3's b2World_RebuildStaticTree would give a host.
		float static_by = o.static_fat_tree ? 0.0f : v3_static_margin - b2_aabbExtension;
		std::vector<uint32_t> order = morton_order(first);
		shapes_.resize(scene->count);
		for (uint32_t i : order) {
			shapes_[i].aabb = box_of(i);
			int32 proxy = statics_.CreateProxy(resized(shapes_[i].aabb, static_by), (void *)(uintptr_t)i);
			shapes_[i].fat = statics_.GetFatAABB(proxy);
		}
		for (uint32_t m = 0; m < moving_; ++m) {
			shape &sh = shapes_[first + m];
			sh.aabb = box_of(first + m);
			mover_proxy_[m] = movers_.CreateProxy(resized(sh.aabb, pad_), (void *)(uintptr_t)(first + m));
			sh.fat = movers_.GetFatAABB(mover_proxy_[m]);
			moved_.push_back(m);
		}
		find_new_pairs(); // every mover queries once: the first frame
		retest();
	}

	/// One frame: the movers' new boxes (and motion, with --b2-displacement) into the tree,
	/// new candidates from the re-inserted ones, then every candidate re-tested.
	void step(const float *dx, const float *dy)
	{
		moved_.clear();
		const b2Vec2 still(0.0f, 0.0f);
		for (uint32_t m = 0; m < moving_; ++m) {
			shape &sh = shapes_[first_ + m];
			sh.aabb = box_of(first_ + m);
			bool moved;
			if (o_.displacement) {
				// 2.4's own rule: MoveProxy decides, the fat box stretched by 4x the motion.
				moved = movers_.MoveProxy(mover_proxy_[m], sh.aabb, b2Vec2(dx[m], dy[m]));
			} else {
				// v3's rule, inline as in its b2FinalizeBodiesTask: re-insert when the true box
				// left the fat box. The box handed over holds the true box, so MoveProxy's own
				// containment test fails too and it always re-inserts.
				moved = !sh.fat.Contains(sh.aabb) && movers_.MoveProxy(mover_proxy_[m], resized(sh.aabb, pad_), still);
			}
			reinserted_[m] = moved;
			if (moved) {
				sh.fat = movers_.GetFatAABB(mover_proxy_[m]);
				moved_.push_back(m);
			}
		}
		find_new_pairs();
		retest();
	}

	const std::vector<bp_pair> &pairs() const { return pairs_; }
	size_t searched() const { return moved_.size(); }
	size_t candidates() const { return candidates_.size(); }

private:
	/// The box grown by `by` on every side, or shrunk by -by (at most to its centre).
	static b2AABB resized(b2AABB box, float by)
	{
		b2Vec2 d(by, by);
		if (by < 0) {
			d.x = -std::min(-by, 0.5f * (box.upperBound.x - box.lowerBound.x));
			d.y = -std::min(-by, 0.5f * (box.upperBound.y - box.lowerBound.y));
		}
		box.lowerBound -= d;
		box.upperBound += d;
		return box;
	}

	b2AABB box_of(uint32_t i) const
	{
		b2AABB box;
		box.lowerBound.Set(scene_->min[0][i], scene_->min[1][i]);
		box.upperBound.Set(scene_->max[0][i], scene_->max[1][i]);
		return box;
	}

	/// Scene entities [0, count) in Morton (Z) order of their centres on a 2^16 grid.
	std::vector<uint32_t> morton_order(uint32_t count) const
	{
		float lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
		for (int k = 0; k < 2; ++k)
			for (uint32_t i = 0; i < count; ++i) {
				lo[k] = std::min(lo[k], scene_->min[k][i]);
				hi[k] = std::max(hi[k], scene_->max[k][i]);
			}
		auto spread = [](uint64_t x) {
			x = (x | x << 16) & 0x0000FFFF0000FFFFull;
			x = (x | x << 8) & 0x00FF00FF00FF00FFull;
			x = (x | x << 4) & 0x0F0F0F0F0F0F0F0Full;
			x = (x | x << 2) & 0x3333333333333333ull;
			return (x | x << 1) & 0x5555555555555555ull;
		};
		std::vector<std::pair<uint64_t, uint32_t>> keyed(count);
		for (uint32_t i = 0; i < count; ++i) {
			uint64_t code = 0;
			for (int k = 0; k < 2; ++k) {
				float centre = 0.5f * (scene_->min[k][i] + scene_->max[k][i]);
				float span = hi[k] > lo[k] ? hi[k] - lo[k] : 1.0f;
				code |= spread((uint64_t)((centre - lo[k]) / span * 65535.0f)) << k;
			}
			keyed[i] = {code, i};
		}
		std::sort(keyed.begin(), keyed.end());
		std::vector<uint32_t> order(count);
		for (uint32_t i = 0; i < count; ++i)
			order[i] = keyed[i].second;
		return order;
	}

	/// Threads for n items: v3 gives a task at least 64 (minRange in b2UpdateBroadPhasePairs
	/// and b2Collide), so small frames stay on the calling thread.
	int threads_for(size_t n) const { return (int)std::max<size_t>(1, std::min<size_t>(o_.threads, n / 64)); }

	/// Closed overlap of both pairs' boxes (b2TestOverlap rejects only d > 0: touching counts).
	bool fat_overlap(bp_pair c) const { return b2TestOverlap(shapes_[c.lo].fat, shapes_[c.hi].fat); }
	bool true_overlap(bp_pair c) const { return b2TestOverlap(shapes_[c.lo].aabb, shapes_[c.hi].aabb); }

	/// Tree query callback (b2DynamicTree::Query calls QueryCallback): collects the pairs of
	/// `self` not yet in the candidate set. Read-only, so threads may query at once.
	struct query {
		const box2d_scheme *scheme;
		const b2DynamicTree *tree;
		std::vector<bp_pair> *out;
		uint32_t self;

		bool QueryCallback(int32 proxy)
		{
			uint32_t other = (uint32_t)(uintptr_t)tree->GetUserData(proxy);
			if (other == self)
				return true;
			// Two re-inserted movers find each other; the lower one's query keeps the pair (v3 does the same).
			if (other >= scheme->first_ && other < self && scheme->reinserted_[other - scheme->first_])
				return true;
			bp_pair p = other < self ? bp_pair{other, self} : bp_pair{self, other};
			if (!scheme->known_.contains(key_of(p.lo, p.hi)))
				out->push_back(p);
			return true;
		}
	};

	void query_mover(uint32_t m, std::vector<bp_pair> &out) const
	{
		const b2AABB &fat = shapes_[first_ + m].fat;
		query s{this, &statics_, &out, first_ + m};
		statics_.Query(&s, fat);
		query d{this, &movers_, &out, first_ + m};
		movers_.Query(&d, fat);
	}

	/// The re-inserted movers query both trees with their fat box (in parallel with threads,
	/// as v3's b2FindPairsTask); the new pairs enter the set serially, in thread order.
	void find_new_pairs()
	{
		int threads = threads_for(moved_.size());
		for (auto &f : found_)
			f.clear();
		if (threads == 1) {
			for (uint32_t m : moved_)
				query_mover(m, found_[0]);
		} else {
			parallel_chunks(moved_.size(), threads, [this](size_t begin, size_t end, size_t t) {
				for (size_t k = begin; k < end; ++k)
					query_mover(moved_[k], found_[t]);
			});
		}
		for (auto &f : found_)
			for (bp_pair p : f)
				if (known_.insert(key_of(p.lo, p.hi)))
					candidates_.push_back(p);
	}

	/// Every candidate: dropped when the fat boxes no longer overlap (as v3 destroys a contact
	/// whose fat boxes separated), else tested exactly on the true boxes.
	void retest()
	{
		pairs_.clear();
		size_t n = candidates_.size(), kept = 0;
		int threads = threads_for(n);
		if (threads == 1) {
			for (size_t k = 0; k < n; ++k) {
				bp_pair c = candidates_[k];
				if (!fat_overlap(c)) {
					known_.erase(key_of(c.lo, c.hi));
					continue;
				}
				candidates_[kept++] = c;
				if (true_overlap(c))
					pairs_.push_back(c);
			}
			candidates_.resize(kept);
			return;
		}
		keep_.resize(n);
		parallel_chunks(n, threads, [this](size_t begin, size_t end, size_t t) {
			std::vector<bp_pair> &out = exact_[t];
			out.clear();
			for (size_t k = begin; k < end; ++k) {
				bp_pair c = candidates_[k];
				keep_[k] = fat_overlap(c);
				if (keep_[k] && true_overlap(c))
					out.push_back(c);
			}
		});
		for (auto &e : exact_)
			pairs_.insert(pairs_.end(), e.begin(), e.end());
		for (size_t k = 0; k < n; ++k) {
			bp_pair c = candidates_[k];
			if (keep_[k])
				candidates_[kept++] = c;
			else
				known_.erase(key_of(c.lo, c.hi));
		}
		candidates_.resize(kept);
	}

	const options &o_;
	const bp_scene *scene_;
	uint32_t first_, moving_;
	float pad_; ///< movers are handed to the tree grown by this: the fat margin is 0.1 + pad_
	b2DynamicTree statics_, movers_;
	/// Per scene entity, what v3 keeps in its b2Shape side by side: the true box (in Box2D
	/// units = scene units) and the fat box in the tree. 32 bytes.
	struct shape {
		b2AABB aabb, fat;
	};
	std::vector<shape> shapes_;
	std::vector<int32> mover_proxy_;
	std::vector<uint8_t> reinserted_; ///< per mover: re-inserted this frame
	std::vector<uint32_t> moved_;     ///< the movers re-inserted this frame
	pair_set known_;
	std::vector<bp_pair> candidates_, pairs_;
	std::vector<std::vector<bp_pair>> found_, exact_; ///< per thread
	std::vector<uint8_t> keep_;
};

/// An incremental broadphase world over the same scene: statics BP_KIND_STATIC, movers handed
/// over each frame by dense index.
class incremental {
public:
	incremental(const options &o, const bp_scene *scene, uint32_t first) : scene_(scene), first_(first)
	{
		bp_world_def def = bp_world_def_default();
		def.dims = 2;
		def.thread_count = o.threads;
		def.incremental = true;
		def.margin = o.bp_margin;
		def.capacity = scene->count;
		if (bp_world_create(&def, &world_) != BP_OK) {
			std::fprintf(stderr, "bp_peer_incremental: cannot create the world\n");
			std::exit(3);
		}
		bp_bounds_arrays all = bp_scene_frame_bounds(scene, 0);
		bp_entity_def e = bp_entity_def_default();
		e.kind = BP_KIND_STATIC;
		bp_status status = bp_world_create_entities(world_, first, &all, &e, nullptr);
		e.kind = BP_KIND_DYNAMIC;
		if (status == BP_OK)
			status = bp_world_create_entities(world_, scene->count - first, offset(all, first), &e, nullptr);
		if (status == BP_OK)
			status = bp_world_step(world_); // the full build every world starts with
		fail_unless(status);
		for (uint32_t i = first; i < scene->count; ++i)
			index_.push_back(i); // dense index = scene index: statics were created first
	}
	~incremental() { bp_world_destroy(world_); }

	void step()
	{
		bp_bounds_arrays all = bp_scene_frame_bounds(scene_, 0);
		bp_target moved = bp_target_indices((uint32_t)index_.size(), index_.data());
		bp_status status = bp_entities_set_bounds(world_, moved, offset(all, first_));
		if (status == BP_OK)
			status = bp_world_step(world_);
		fail_unless(status);
	}

	const bp_pair *pairs(size_t *count) const { return bp_world_pairs(world_, count); }
	size_t searched() const { return bp_world_stats(world_).searched_count; }

private:
	static const bp_bounds_arrays *offset(bp_bounds_arrays &b, uint32_t first)
	{
		b.min_x += first;
		b.min_y += first;
		b.max_x += first;
		b.max_y += first;
		return &b;
	}

	void fail_unless(bp_status status) const
	{
		if (status != BP_OK) {
			std::fprintf(stderr, "bp_peer_incremental: %s\n", bp_world_last_error(world_));
			std::exit(3);
		}
	}

	const bp_scene *scene_;
	uint32_t first_;
	bp_world *world_ = nullptr;
	std::vector<uint32_t> index_;
};

/// Moves scene entities [first, first + count) by up to 5% of their extent per axis, as
/// perf/incremental.c's move(); the motion goes to dx, dy (Box2D's displacement).
void move(bp_scene *s, uint32_t first, uint32_t count, uint64_t *rng, std::vector<float> *d)
{
	for (int k = 0; k < 2; ++k)
		for (uint32_t i = first; i < first + count; ++i) {
			*rng = bp_splitmix64(*rng);
			float u = (float)(*rng >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
			float step = 0.05f * u * (s->max[k][i] - s->min[k][i]);
			s->min[k][i] += step;
			s->max[k][i] += step;
			d[k][i - first] = step;
		}
}

/// Both pair sets, sorted, must be equal; prints the first differences when not.
bool same_pairs(int32_t frame, const box2d_scheme &b2, const incremental &bp)
{
	std::vector<bp_pair> a = b2.pairs();
	size_t n = 0;
	const bp_pair *p = bp.pairs(&n);
	std::vector<bp_pair> b(p, p + n);
	bp_pairs_sort(a.data(), a.size());
	bp_pairs_sort(b.data(), b.size());
	auto equal = [](bp_pair x, bp_pair y) { return x.lo == y.lo && x.hi == y.hi; };
	if (a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), equal))
		return true;
	std::fprintf(stderr, "bp_peer_incremental: frame %d: box2d_scheme %zu pairs, incremental %zu\n", frame, a.size(),
		b.size());
	auto less = [](bp_pair x, bp_pair y) { return x.lo != y.lo ? x.lo < y.lo : x.hi < y.hi; };
	std::vector<bp_pair> only;
	std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only), less);
	for (size_t k = 0; k < only.size() && k < 5; ++k)
		std::fprintf(stderr, "  only box2d_scheme: (%u, %u)\n", only[k].lo, only[k].hi);
	only.clear();
	std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only), less);
	for (size_t k = 0; k < only.size() && k < 5; ++k)
		std::fprintf(stderr, "  only incremental: (%u, %u)\n", only[k].lo, only[k].hi);
	return false;
}

struct record {
	const char *name;
	std::vector<double> ms, cpu_ms, searched, candidates;
	size_t pairs = 0;
};

bool parse(int argc, char **argv, options &o)
{
	for (int i = 1; i < argc; ++i) {
		const char *a = argv[i];
		if (std::strcmp(a, "--check-all") == 0) {
			o.check = UINT32_MAX;
			continue;
		}
		if (std::strcmp(a, "--b2-displacement") == 0) {
			o.displacement = true;
			continue;
		}
		if (std::strcmp(a, "--b2-static-fat") == 0) {
			o.static_fat_tree = true;
			continue;
		}
		const char *v = i + 1 < argc ? argv[i + 1] : nullptr;
		bool known = std::strcmp(a, "--static") == 0 || std::strcmp(a, "--moving") == 0 ||
			     std::strcmp(a, "--frames") == 0 || std::strcmp(a, "--threads") == 0 ||
			     std::strcmp(a, "--seed") == 0 || std::strcmp(a, "--csv") == 0 ||
			     std::strcmp(a, "--check") == 0 || std::strcmp(a, "--b2-margin") == 0 ||
			     std::strcmp(a, "--margin") == 0 || std::strcmp(a, "--warmup") == 0;
		if (!known || !v) {
			std::fprintf(stderr,
				"usage: bp_peer_incremental [--static S] [--moving M] [--frames F] [--warmup W] [--threads T] [--seed N]\n"
				"       [--check F | --check-all] [--b2-margin M] [--b2-displacement] [--b2-static-fat]\n"
				"       [--margin M] [--csv FILE]\n");
			return false;
		}
		++i;
		if (std::strcmp(a, "--static") == 0)
			o.n_static = (uint32_t)std::strtoul(v, nullptr, 10);
		else if (std::strcmp(a, "--moving") == 0)
			o.n_moving = (uint32_t)std::strtoul(v, nullptr, 10);
		else if (std::strcmp(a, "--frames") == 0)
			o.frames = (uint32_t)std::strtoul(v, nullptr, 10);
		else if (std::strcmp(a, "--warmup") == 0)
			o.warmup = (uint32_t)std::strtoul(v, nullptr, 10);
		else if (std::strcmp(a, "--threads") == 0)
			o.threads = std::atoi(v);
		else if (std::strcmp(a, "--seed") == 0)
			o.seed = std::strtoull(v, nullptr, 10);
		else if (std::strcmp(a, "--csv") == 0)
			o.csv = v;
		else if (std::strcmp(a, "--check") == 0)
			o.check = (uint32_t)std::strtoul(v, nullptr, 10);
		else if (std::strcmp(a, "--b2-margin") == 0)
			o.b2_margin = std::strtof(v, nullptr);
		else
			o.bp_margin = std::strtof(v, nullptr);
	}
	// Below 0.1 the box handed to MoveProxy would have to shrink, and it could then stay
	// inside the fat box the true box left: MoveProxy would not re-insert.
	bool margin_ok = o.b2_margin >= b2_aabbExtension && std::isfinite(o.b2_margin) &&
			 (!o.displacement || o.b2_margin == b2_aabbExtension);
	if (o.frames == 0 || o.n_moving == 0 || o.threads < 1 || !margin_ok || !(o.bp_margin >= 0)) {
		std::fprintf(stderr, "bp_peer_incremental: bad options (--b2-margin >= 0.1, and 0.1 with --b2-displacement)\n");
		return false;
	}
	return true;
}

} // namespace

int main(int argc, char **argv)
{
	options o;
	if (!parse(argc, argv, o))
		return 2;
	bp_gen_def gen = bp_gen_def_default();
	gen.n = o.n_static + o.n_moving;
	gen.dims = 2;
	gen.seed = o.seed;
	bp_scene *scene = nullptr;
	if (bp_scene_generate(&gen, &scene) != BP_OK) {
		std::fprintf(stderr, "bp_peer_incremental: cannot generate %u entities\n", gen.n);
		return 3;
	}
	uint32_t first = o.n_static; // the last M entities move: a uniform random subset
	std::printf("# box2d_scheme: Box2D %d.%d.%d b2DynamicTree; mover margin %g, static margin %g (scene units), "
		    "displacement %s; incremental: bp_world_def.margin %g%s\n",
		b2_version.major, b2_version.minor, b2_version.revision, o.b2_margin,
		o.static_fat_tree ? b2_aabbExtension : v3_static_margin, o.displacement ? "on" : "off",
		o.bp_margin, o.bp_margin == 0 ? " (chosen by the world)" : "");

	double t0 = peer_now_ms();
	box2d_scheme b2(o, scene, first);
	double t1 = peer_now_ms();
	incremental bp(o, scene, first);
	double t2 = peer_now_ms();
	std::printf("# setup: box2d_scheme %.0f ms, incremental %.0f ms\n", t1 - t0, t2 - t1);
	if (o.check > 0 && !same_pairs(-3, b2, bp))
		return 1;

	record rec[2] = {{"box2d_scheme", {}, {}, {}, {}, 0}, {"incremental", {}, {}, {}, {}, 0}};
	std::vector<float> d[2] = {std::vector<float>(o.n_moving), std::vector<float>(o.n_moving)};
	uint64_t rng = bp_splitmix64(o.seed + 99);
	for (int32_t f = -(int32_t)o.warmup; f < (int32_t)o.frames; ++f) { // warm-up frames: f < 0
		move(scene, first, o.n_moving, &rng, d);
		for (int k = 0; k < 2; ++k) {
			int s = (k + f) & 1; // alternate which subject goes first
			double start = peer_now_ms(), cpu_start = peer_cpu_ms();
			if (s == 0)
				b2.step(d[0].data(), d[1].data());
			else
				bp.step();
			double ms = peer_now_ms() - start, cpu = peer_cpu_ms() - cpu_start;
			if (f < 0)
				continue;
			rec[s].ms.push_back(ms);
			rec[s].cpu_ms.push_back(cpu);
			rec[s].searched.push_back(s == 0 ? (double)b2.searched() : (double)bp.searched());
			rec[s].candidates.push_back(s == 0 ? (double)b2.candidates() : 0.0);
		}
		if ((uint32_t)(f + (int32_t)o.warmup) < o.check && !same_pairs(f, b2, bp))
			return 1;
	}
	rec[0].pairs = b2.pairs().size();
	bp.pairs(&rec[1].pairs);

	FILE *csv = o.csv ? std::fopen(o.csv, "a") : nullptr;
	if (o.csv && !csv) {
		std::fprintf(stderr, "bp_peer_incremental: cannot open %s\n", o.csv);
		return 3;
	}
	if (csv && std::ftell(csv) == 0)
		std::fprintf(csv, "workload,dims,static,moving,threads,seed,warmup,frames,subject,ms_median,ms_min,cpu_ms_median,"
				  "pairs,searched_median,candidates_median,ratio_median,ratio_min,cpu_ratio,b2_margin,"
				  "b2_static_margin,b2_displacement,bp_margin\n");
	auto min_of = [](const std::vector<double> &v) { return *std::min_element(v.begin(), v.end()); };
	const record &inc = rec[1];
	for (const record &r : rec) {
		double med = median_of(r.ms), min = min_of(r.ms), cpu = median_of(r.cpu_ms);
		double ratio = med / median_of(inc.ms), ratio_min = min / min_of(inc.ms), cpu_ratio = cpu / median_of(inc.cpu_ms);
		std::printf("static_moving dims=2 static=%u moving=%u threads=%d %-12s median %8.3f ms  min %8.3f ms  cpu %8.3f ms"
			    "  pairs %zu  searched %.0f  candidates %.0f\n",
			o.n_static, o.n_moving, o.threads, r.name, med, min, cpu, r.pairs, median_of(r.searched),
			median_of(r.candidates));
		if (csv)
			std::fprintf(csv,
				"static_moving,2,%u,%u,%d,%" PRIu64 ",%u,%u,%s,%.4f,%.4f,%.4f,%zu,%.0f,%.0f,%.3f,%.3f,%.3f,%g,%g,%d,%g\n",
				o.n_static, o.n_moving, o.threads, o.seed, o.warmup, o.frames, r.name, med, min, cpu, r.pairs,
				median_of(r.searched), median_of(r.candidates), ratio, ratio_min, cpu_ratio, o.b2_margin,
				o.static_fat_tree ? b2_aabbExtension : v3_static_margin, o.displacement ? 1 : 0, o.bp_margin);
	}
	std::printf("ratio box2d_scheme / incremental: median %.2f, min %.2f, cpu %.2f (%u frames, %s)\n",
		median_of(rec[0].ms) / median_of(inc.ms), min_of(rec[0].ms) / min_of(inc.ms),
		median_of(rec[0].cpu_ms) / median_of(inc.cpu_ms), o.frames,
		o.check == UINT32_MAX ? "every frame checked" : "pairs checked equal on the first frames");
	if (csv)
		std::fclose(csv);
	bp_scene_destroy(scene);
	return 0;
}
