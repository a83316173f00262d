// SPDX-License-Identifier: MIT
// Output files (output_file.h): where the bytes go (a symlink followed to the name it leads to,
// in place for anything that is not a regular file), the temporary file beside the target, and
// the rename that replaces the target only once everything is written.
#define _POSIX_C_SOURCE 200809L // lstat, readlink, faccessat, fdopen, fchown, O_CLOEXEC, F_DUPFD_CLOEXEC
#include "output_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/vfs.h>
#endif

/// Links followed before giving up with ELOOP, as the kernel's own limit.
#define OUTPUT_MAX_LINKS 40
/// Bytes of the target's name kept in the temporary file's name, so that it fits NAME_MAX.
#define OUTPUT_TEMP_BASE_MAX 200
#define OUTPUT_TEMP_TRIES 100

static bool fail(bp_output *out, int error)
{
	out->error = error;
	const char *target = out->target;
	if (target && strcmp(target, out->path) != 0)
		snprintf(out->message, sizeof out->message, "cannot write '%s' (a link to '%s'): %s", out->path, target,
			strerror(error));
	else
		snprintf(out->message, sizeof out->message, "cannot write '%s': %s", out->path, strerror(error));
	return false;
}

static void release(bp_output *out)
{
	free(out->target);
	free(out->temp);
	out->target = out->temp = NULL;
}

static char *join(const char *dir, size_t dir_length, const char *name)
{
	size_t name_length = strlen(name);
	char *joined = malloc(dir_length + name_length + 1);
	if (joined) {
		memcpy(joined, dir, dir_length);
		memcpy(joined + dir_length, name, name_length + 1);
	}
	return joined;
}

/// Length of the directory part of `path`, its last '/' included (0 for a bare name).
static size_t dir_length(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? (size_t)(slash - path) + 1 : 0;
}

/// True when the link `path` is one of the descriptor links of /proc (/dev/stdout leads to
/// /proc/self/fd/1): its target names an open file ("pipe:[123]", a deleted file), not a
/// place to put a new one.
static bool is_descriptor_link(const char *path)
{
#if defined(__linux__)
	size_t length = dir_length(path);
	char *dir = length ? join(path, length, "") : NULL;
	struct statfs fs;
	bool proc = statfs(dir ? dir : ".", &fs) == 0 && fs.f_type == 0x9fa0; // PROC_SUPER_MAGIC
	free(dir);
	return proc;
#else
	(void)path;
	return false;
#endif
}

typedef enum output_kind {
	OUTPUT_REPLACE,    ///< a regular file or a new name: a temporary file renamed over it
	OUTPUT_IN_PLACE,   ///< anything else that exists: opened as it is (a directory fails there)
	OUTPUT_DESCRIPTOR, ///< a descriptor link of /proc: the open file it names, in place
} output_kind;

/// Where the bytes of an output go.
typedef struct output_place {
	output_kind kind;
	char *name;     ///< malloc'd: where the links lead (the name replaced, or the descriptor link)
	bool exists;    ///< the name exists; st describes it
	struct stat st;
} output_place;

/// Follows the symlinks of `path` to the name that holds (or will hold) the file: the name the
/// temporary file is renamed to, so the links themselves stay. Stops at a descriptor link.
/// Returns 0, or an errno value (and `place` holds nothing).
static int find_place(const char *path, output_place *place)
{
	*place = (output_place){.kind = OUTPUT_REPLACE};
	char *name = join(path, strlen(path), "");
	if (!name)
		return ENOMEM;
	for (int links = 0;; ++links) {
		struct stat st;
		if (lstat(name, &st) != 0) {
			if (errno == ENOENT) // a new file (or a missing directory, which creating it reports)
				break;
			int error = errno;
			free(name);
			return error;
		}
		if (!S_ISLNK(st.st_mode))
			break;
		if (is_descriptor_link(name)) {
			place->kind = OUTPUT_DESCRIPTOR;
			break;
		}
		if (links == OUTPUT_MAX_LINKS) {
			free(name);
			return ELOOP;
		}
		char link[4096];
		ssize_t length = readlink(name, link, sizeof link);
		if (length < 0 || (size_t)length == sizeof link) {
			int error = length < 0 ? errno : ENAMETOOLONG;
			free(name);
			return error;
		}
		link[length] = '\0';
		// A relative link is relative to the directory that holds it.
		char *next = link[0] == '/' ? join(link, (size_t)length, "") : join(name, dir_length(name), link);
		free(name);
		if (!next)
			return ENOMEM;
		name = next;
	}
	place->name = name;
	place->exists = stat(name, &place->st) == 0;
	if (!place->exists && errno != ENOENT) {
		int error = errno;
		free(name);
		*place = (output_place){0};
		return error;
	}
	if (place->kind == OUTPUT_REPLACE && place->exists && !S_ISREG(place->st.st_mode))
		place->kind = OUTPUT_IN_PLACE;
	return 0;
}

/// The descriptor of this process, open for writing, that a descriptor link names
/// (/proc/self/fd/N, /dev/fd/N), or -1. Writing through a copy of it puts the bytes where
/// the shell pointed it, at its offset and in its append mode: opening the link anew would
/// truncate a file that stdout is redirected to, even with >>, and write over its start.
static int own_descriptor(const output_place *place)
{
	const char *base = place->name + dir_length(place->name);
	char *end;
	long fd = base[0] >= '0' && base[0] <= '9' ? strtol(base, &end, 10) : -1;
	if (fd < 0 || *end != '\0' || fd > INT_MAX)
		return -1;
	struct stat ours;
	if (!place->exists || fstat((int)fd, &ours) != 0 || ours.st_dev != place->st.st_dev ||
		ours.st_ino != place->st.st_ino)
		return -1; // another process's descriptor, or ours closed since
	int flags = fcntl((int)fd, F_GETFL);
	return flags >= 0 && (flags & O_ACCMODE) != O_RDONLY ? (int)fd : -1;
}

/// Opens an output written in place: a copy of our own descriptor, or `path` opened anew.
static FILE *open_in_place(const char *path, const output_place *place)
{
	int own = place->kind == OUTPUT_DESCRIPTOR ? own_descriptor(place) : -1;
	if (own < 0)
		return fopen(path, "wb");
	int fd = fcntl(own, F_DUPFD_CLOEXEC, 0);
	FILE *file = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!file && fd >= 0) {
		int error = errno;
		close(fd);
		errno = error;
	}
	return file;
}

static int access_error(const char *path, int mode)
{
	return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0 ? 0 : errno;
}

/// Checks that a file can be created in the directory of `target`.
static int directory_access(const char *target)
{
	size_t length = dir_length(target);
	char *dir = length ? join(target, length, "") : NULL;
	if (length && !dir)
		return ENOMEM;
	int error = access_error(dir ? dir : ".", W_OK | X_OK);
	free(dir);
	return error;
}

/// Creates a new file beside `target` (O_EXCL: never one that exists) with fopen's mode, so
/// the umask applies. Returns the descriptor and its malloc'd name, or -1 with errno set.
static int create_temp(const char *target, char **temp)
{
	static _Atomic uint32_t counter;
	size_t length = dir_length(target);
	const char *base = target + length;
	size_t base_length = strlen(base);
	if (base_length > OUTPUT_TEMP_BASE_MAX)
		base_length = OUTPUT_TEMP_BASE_MAX;
	size_t size = length + base_length + 32;
	char *name = malloc(size);
	if (!name)
		return -1;
	struct timespec now;
	timespec_get(&now, TIME_UTC);
	for (int attempt = 0; attempt < OUTPUT_TEMP_TRIES; ++attempt) {
		// Unpredictable enough to rarely collide; O_EXCL settles any collision.
		uint32_t tag = (uint32_t)getpid() * 2654435761u ^ (uint32_t)now.tv_nsec ^
			atomic_fetch_add(&counter, 1) * 0x9E3779B9u;
		snprintf(name, size, "%.*s.%.*s.%08x.tmp", (int)length, target, (int)base_length, base, tag);
		int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*temp = name;
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	int error = errno;
	free(name);
	errno = error;
	return -1;
}

/// Gives the new file the replaced one's owner (only root may; others keep their own) and mode.
static int keep_owner_and_mode(int fd, const struct stat *st)
{
	if ((st->st_uid != geteuid() || st->st_gid != getegid()) && fchown(fd, st->st_uid, st->st_gid) != 0 &&
		errno != EPERM)
		return errno;
	return fchmod(fd, st->st_mode & 07777) == 0 ? 0 : errno;
}

bool bp_output_check(bp_output *out, const char *path)
{
	*out = (bp_output){.path = path};
	output_place place;
	int error = find_place(path, &place);
	if (!error && place.kind == OUTPUT_REPLACE) {
		out->target = place.name; // named in the message
		place.name = NULL;
		error = place.exists ? access_error(out->target, W_OK) : 0;
		if (!error)
			error = directory_access(out->target);
	} else if (!error) {
		error = access_error(path, W_OK);
	}
	if (error)
		fail(out, error);
	free(place.name);
	release(out);
	return !error;
}

bool bp_output_open(bp_output *out, const char *path)
{
	*out = (bp_output){.path = path};
	output_place place;
	int error = find_place(path, &place);
	if (error)
		return fail(out, error);
	if (place.kind != OUTPUT_REPLACE) {
		out->file = open_in_place(path, &place);
		free(place.name);
		return out->file || fail(out, errno);
	}
	out->target = place.name;
	// A file we may not write stays as it is, as fopen would leave it.
	if (place.exists && (error = access_error(out->target, W_OK)) != 0) {
		fail(out, error);
		release(out);
		return false;
	}
	int fd = create_temp(out->target, &out->temp);
	error = fd < 0 ? errno : place.exists ? keep_owner_and_mode(fd, &place.st) : 0;
	if (!error && !(out->file = fdopen(fd, "wb")))
		error = errno;
	if (error) {
		fail(out, error);
		if (fd >= 0) {
			close(fd);
			unlink(out->temp);
		}
		release(out);
		return false;
	}
	return true;
}

bool bp_output_commit(bp_output *out)
{
	if (!out->file)
		return false;
	// errno is cleared so that an error left by an earlier unchecked write reads as EIO
	// rather than as some unrelated old errno.
	errno = 0;
	int error = fflush(out->file) != 0 ? (errno ? errno : EIO) : ferror(out->file) ? EIO : 0;
	if (fclose(out->file) != 0 && !error)
		error = errno ? errno : EIO;
	out->file = NULL;
	if (!error && out->temp && rename(out->temp, out->target) != 0)
		error = errno;
	if (error) {
		fail(out, error);
		if (out->temp)
			unlink(out->temp);
	}
	release(out);
	return !error;
}

void bp_output_abort(bp_output *out, int error)
{
	if (error)
		fail(out, error);
	if (out->file)
		fclose(out->file);
	out->file = NULL;
	if (out->temp)
		unlink(out->temp);
	release(out);
}
