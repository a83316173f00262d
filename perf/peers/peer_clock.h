// SPDX-License-Identifier: MIT
// The two clocks the peer drivers time with: wall and process CPU, in milliseconds.
#ifndef BP_PEER_CLOCK_H
#define BP_PEER_CLOCK_H

#include <chrono>
#include <time.h>

inline double peer_now_ms()
{
	using clock = std::chrono::steady_clock;
	return std::chrono::duration<double, std::milli>(clock::now().time_since_epoch()).count();
}

/// Process CPU time (all threads; OpenMP workers that spin count): on a loaded machine wall
/// times include waiting for a core, CPU time does not.
inline double peer_cpu_ms()
{
	timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#endif
