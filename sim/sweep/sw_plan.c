/*
 * sw_plan.c - what a sweep runs: the scenario list (files, directories,
 * globs, DTB trees), each scenario's content hash (the resume key), and the
 * order tasks are handed out in.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/evp.h>

#include "sim/sweep/sweep.h"

#define HASH_TAG "dlsim-sweep-scenario/1"
#define READ_CHUNK (1u << 16)

uint32_t dl_sweep_workers(const struct dl_sweep_plan *p, enum dl_order order)
{
	return p->workers ? p->workers : dl_order_policy(order)->default_workers;
}

void dl_sweep_slot(const struct dl_sweep_plan *p, uint32_t r, struct dl_sweep_slot *s)
{
	uint32_t nv = dl_sweep_variants(p), base = r / nv, v = r % nv;
	unsigned twin = 0;

	/* variant v > 0 is the v-th twin bit set: model before replay */
	for (unsigned b = 1, k = 0; v && b <= DL_SWEEP_TWIN_REPLAY; b <<= 1)
		if ((p->twins & b) && ++k == v)
			twin = b;
	s->order = p->order[base / p->nkernels];
	s->kernel = p->kernel[base % p->nkernels];
	s->twin = twin;
	s->mode = twin == DL_SWEEP_TWIN_MODEL ? (p->twin_boot ? "twin-model-boot" : "twin-model") :
		  twin == DL_SWEEP_TWIN_REPLAY ? "twin-replay" : p->mode;
	s->of = base * nv;
}

static int add_one(struct dl_sweep_plan *p, const char *path, size_t label_off, bool dtb)
{
	struct stat sb;

	if (p->nsc == p->capsc) {
		uint32_t nc = p->capsc ? p->capsc * 2 : 64;
		struct dl_sweep_scenario *ns = realloc(p->sc, nc * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		p->sc = ns;
		p->capsc = nc;
	}
	memset(&p->sc[p->nsc], 0, sizeof(p->sc[0]));
	if (!(p->sc[p->nsc].path = strdup(path)))
		return -ENOMEM;
	p->sc[p->nsc].dtb = dtb;
	p->sc[p->nsc].label = p->sc[p->nsc].path + label_off;
	p->sc[p->nsc].cost = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
	p->nsc++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *nm, const char *s)
{
	if (nm->n == nm->cap) {
		size_t nc = nm->cap ? nm->cap * 2 : 64;
		char **nv = realloc(nm->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		nm->v = nv;
		nm->cap = nc;
	}
	if (!(nm->v[nm->n] = strdup(s)))
		return -ENOMEM;
	nm->n++;
	return 0;
}

/* Files under @dir matching @pattern; recursively when @deep. */
static int walk(const char *dir, const char *pattern, bool deep, struct names *nm, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -errno;
	while (!ret && (e = readdir(d))) {
		char path[4096];
		struct stat sb;

		if (e->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		if (stat(path, &sb) != 0)
			continue;
		if (S_ISDIR(sb.st_mode)) {
			if (deep && depth < 16)
				ret = walk(path, pattern, deep, nm, depth + 1);
		} else if (S_ISREG(sb.st_mode) && !fnmatch(pattern, e->d_name, 0)) {
			ret = names_add(nm, path);
		}
	}
	closedir(d);
	return ret;
}

int dl_sweep_add_scenarios(struct dl_sweep_plan *p, const char *arg, bool dtb, char *err,
			   size_t errlen)
{
	struct names nm = { 0 };
	struct stat sb;
	size_t dir_len = 0;
	int ret = 0;

	if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		ret = walk(arg, dtb ? "*.dtb" : "*.json", dtb, &nm, 0);
		dir_len = strlen(arg) + 1;
		if (!ret && !nm.n) {
			snprintf(err, errlen, "%s: no %s files in this directory", arg,
				 dtb ? "*.dtb" : "*.json");
			ret = -ENOENT;
		}
	} else if (stat(arg, &sb) == 0) {
		ret = names_add(&nm, arg);
	} else {
		glob_t g;
		int gr = glob(arg, 0, NULL, &g);

		if (gr == 0) {
			for (size_t i = 0; i < g.gl_pathc && !ret; i++)
				if (stat(g.gl_pathv[i], &sb) == 0 && S_ISREG(sb.st_mode))
					ret = names_add(&nm, g.gl_pathv[i]);
			globfree(&g);
		}
		if (!ret && !nm.n) {
			snprintf(err, errlen, "%s: no such file, directory or matching file", arg);
			ret = -ENOENT;
		}
	}
	if (ret && !err[0])
		snprintf(err, errlen, "%s: %s", arg, strerror(-ret));
	if (!ret) {
		qsort(nm.v, nm.n, sizeof(*nm.v), cmp_str);
		/* labels start below the deepest directory all the files share */
		if (dir_len && nm.n > 1) {
			const char *a = nm.v[0], *z = nm.v[nm.n - 1];
			size_t k = 0;

			while (a[k] && a[k] == z[k])
				k++;
			while (k && a[k - 1] != '/')
				k--;
			if (k > dir_len)
				dir_len = k;
		}
		for (size_t i = 0; i < nm.n && !ret; i++) {
			const char *base = strrchr(nm.v[i], '/');
			size_t off = dir_len ? dir_len : base ? (size_t)(base + 1 - nm.v[i]) : 0;

			ret = add_one(p, nm.v[i], off, dtb);
		}
		if (ret)
			snprintf(err, errlen, "out of memory");
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	return ret;
}

/* SHA-256 of the tag, the kind, the file's bytes and the --set overrides. */
static int hash_one(const struct dl_sweep_plan *p, struct dl_sweep_scenario *s, char *err,
		    size_t errlen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE], *buf = malloc(READ_CHUNK);
	unsigned int mdlen = 0;
	const char *kind = s->dtb ? "dtb" : "json";
	FILE *f = fopen(s->path, "rb");
	size_t n;
	int ret = 0;

	if (!f) {
		snprintf(err, errlen, "%s: cannot open: %s", s->path, strerror(errno));
		ret = -errno;
		goto out;
	}
	if (!ctx || !buf || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto out;
	}
	EVP_DigestUpdate(ctx, HASH_TAG, sizeof(HASH_TAG));
	EVP_DigestUpdate(ctx, kind, strlen(kind) + 1);
	if (s->dtb) {
		/* the import's options make another scenario of the same file */
		char how[64];

		snprintf(how, sizeof(how), "import kernel=%d async=%d drivers=%d",
			 (int)p->dtb.kernel, (int)p->dtb.async, (int)p->dtb.drivers);
		EVP_DigestUpdate(ctx, how, strlen(how) + 1);
	}
	if (p->probe_module)
		EVP_DigestUpdate(ctx, "probe-context=module", sizeof("probe-context=module"));
	while ((n = fread(buf, 1, READ_CHUNK, f)) > 0)
		EVP_DigestUpdate(ctx, buf, n);
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", s->path);
		ret = -EIO;
		goto out;
	}
	for (size_t i = 0; i < p->nset; i++) {
		EVP_DigestUpdate(ctx, p->set[i].key, strlen(p->set[i].key) + 1);
		EVP_DigestUpdate(ctx, p->set[i].value, strlen(p->set[i].value) + 1);
	}
	EVP_DigestFinal_ex(ctx, md, &mdlen);
	for (unsigned i = 0; i < mdlen && 2 * i + 2 < DL_SWEEP_HASH_HEX; i++)
		snprintf(s->hash + 2 * i, 3, "%02x", md[i]);
out:
	if (f)
		fclose(f);
	free(buf);
	EVP_MD_CTX_free(ctx);
	return ret;
}

int dl_sweep_hash_all(struct dl_sweep_plan *p, char *err, size_t errlen)
{
	uint32_t n = 0;

	/* a path given twice (two overlapping globs) runs once */
	for (uint32_t i = 0; i < p->nsc; i++) {
		bool dup = false;

		for (uint32_t k = 0; k < n && !dup; k++)
			dup = !strcmp(p->sc[k].path, p->sc[i].path);
		if (dup) {
			free(p->sc[i].path);
			continue;
		}
		p->sc[n++] = p->sc[i];
	}
	p->nsc = n;
	for (uint32_t i = 0; i < p->nsc; i++) {
		int ret = hash_one(p, &p->sc[i], err, errlen);

		if (ret)
			return ret;
	}
	return 0;
}

void dl_sweep_plan_free(struct dl_sweep_plan *p)
{
	for (uint32_t i = 0; i < p->nsc; i++)
		free(p->sc[i].path);
	free(p->sc);
	free(p->run_base);
	p->sc = NULL;
	p->run_base = NULL;
	p->nsc = p->capsc = 0;
}

int dl_sweep_assign_ids(struct dl_sweep_plan *p, const uint64_t *pending, int64_t first)
{
	uint32_t n = dl_sweep_ntasks(p);

	free(p->run_base);
	p->run_base = malloc(((size_t)n + 1) * sizeof(*p->run_base));
	if (!p->run_base)
		return -ENOMEM;
	for (uint32_t t = 0; t < n; t++) {
		p->run_base[t] = first;
		first += __builtin_popcountll(pending[t]);
	}
	return 0;
}

static const struct dl_sweep_plan *order_plan;

static int cmp_cost(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t cx = order_plan->sc[x / order_plan->nseeds].cost;
	uint64_t cy = order_plan->sc[y / order_plan->nseeds].cost;

	if (cx != cy)
		return cx > cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

uint32_t *dl_sweep_task_order(const struct dl_sweep_plan *p)
{
	uint32_t n = dl_sweep_ntasks(p), *t = malloc(((size_t)n + 1) * sizeof(*t));

	if (!t)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		t[i] = i;
	order_plan = p;
	qsort(t, n, sizeof(*t), cmp_cost);
	return t;
}
