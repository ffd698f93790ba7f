// Loads libvips at the first image: dlopen, dlsym of every function in
// `vipsapi`, an ABI check, VIPS_INIT's work and Roost's settings. Until then
// none of libvips' ~60 libraries is mapped (docs/MEMORY.md).
#include "roost_vips.h"
#include "vips_api.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

roost_vips_api vipsapi;

#define SYMBOL(field, name) {name, (void **)&vipsapi.field}
static const struct { const char *name; void **slot; } symbols[] = {
    SYMBOL(version, "vips_version"),
    SYMBOL(init, "vips_init"),
    SYMBOL(vector_set_enabled, "vips_vector_set_enabled"),
    SYMBOL(concurrency_set, "vips_concurrency_set"),
    SYMBOL(cache_set_max, "vips_cache_set_max"),
    SYMBOL(cache_set_max_mem, "vips_cache_set_max_mem"),
    SYMBOL(cache_set_max_files, "vips_cache_set_max_files"),
    SYMBOL(enum_from_nick, "vips_enum_from_nick"),
    SYMBOL(access_get_type, "vips_access_get_type"),
    SYMBOL(fail_on_get_type, "vips_fail_on_get_type"),
    SYMBOL(size_get_type, "vips_size_get_type"),
    SYMBOL(interesting_get_type, "vips_interesting_get_type"),
    SYMBOL(interpretation_get_type, "vips_interpretation_get_type"),
    SYMBOL(error_clear, "vips_error_clear"),
    SYMBOL(error_buffer_copy, "vips_error_buffer_copy"),
    SYMBOL(error, "vips_error"),
    SYMBOL(g_free, "g_free"),
    SYMBOL(g_object_unref, "g_object_unref"),
    SYMBOL(foreign_find_load_buffer, "vips_foreign_find_load_buffer"),
    SYMBOL(foreign_find_load, "vips_foreign_find_load"),
    SYMBOL(image_new_from_buffer, "vips_image_new_from_buffer"),
    SYMBOL(image_new_from_file, "vips_image_new_from_file"),
    SYMBOL(image_get_width, "vips_image_get_width"),
    SYMBOL(image_get_height, "vips_image_get_height"),
    SYMBOL(image_get_bands, "vips_image_get_bands"),
    SYMBOL(image_get_typeof, "vips_image_get_typeof"),
    SYMBOL(image_get_int, "vips_image_get_int"),
    SYMBOL(image_set_int, "vips_image_set_int"),
    SYMBOL(image_write_to_buffer, "vips_image_write_to_buffer"),
    SYMBOL(avg, "vips_avg"),
    SYMBOL(jpegsave_buffer, "vips_jpegsave_buffer"),
    SYMBOL(webpsave_buffer, "vips_webpsave_buffer"),
    SYMBOL(pngsave_buffer, "vips_pngsave_buffer"),
    SYMBOL(gifsave_buffer, "vips_gifsave_buffer"),
    SYMBOL(thumbnail_image, "vips_thumbnail_image"),
    SYMBOL(xyz, "vips_xyz"),
    SYMBOL(extract_band, "vips_extract_band"),
    SYMBOL(remainder_const1, "vips_remainder_const1"),
    SYMBOL(cast_uchar, "vips_cast_uchar"),
    SYMBOL(invert, "vips_invert"),
    SYMBOL(bandjoin, "vips_bandjoin"),
    SYMBOL(copy, "vips_copy"),
    SYMBOL(thread_shutdown, "vips_thread_shutdown"),
};
#undef SYMBOL

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_error[512] = "libvips was not loaded";

const char *roost_vips_library(void) {
    const char *name = getenv("ROOST_LIBVIPS");
    return name && *name ? name : "libvips.so.42";
}

/// Is each enum value roost_vips.c passes the one this libvips means?
static int enums_match(void) {
    const struct { roost_gtype (*type)(void); const char *nick; int value; } expected[] = {
        {vipsapi.access_get_type, "sequential", VIPS_ACCESS_SEQUENTIAL},
        {vipsapi.fail_on_get_type, "truncated", VIPS_FAIL_ON_TRUNCATED},
        {vipsapi.fail_on_get_type, "error", VIPS_FAIL_ON_ERROR},
        {vipsapi.size_get_type, "down", VIPS_SIZE_DOWN},
        {vipsapi.interesting_get_type, "none", VIPS_INTERESTING_NONE},
        {vipsapi.interesting_get_type, "centre", VIPS_INTERESTING_CENTRE},
        {vipsapi.interpretation_get_type, "b-w", VIPS_INTERPRETATION_B_W},
        {vipsapi.interpretation_get_type, "srgb", VIPS_INTERPRETATION_sRGB},
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
        if (vipsapi.enum_from_nick("roostd", expected[i].type(), expected[i].nick) != expected[i].value) {
            snprintf(load_error, sizeof load_error, "%s: the value of \"%s\" is not the one Roost was built for",
                     roost_vips_library(), expected[i].nick);
            return 0;
        }
    }
    return 1;
}

static void load(void) {
    const char *name = roost_vips_library();
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "%s could not be loaded (%s)", name, why ? why : "unknown error");
        return;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        // dlsym on a handle also searches its dependencies (glib, gobject).
        *symbols[i].slot = dlsym(handle, symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(load_error, sizeof load_error, "%s has no %s", name, symbols[i].name);
            return;
        }
    }
    int abi = vipsapi.version(3) - vipsapi.version(5);
    if (abi != ROOST_VIPS_ABI) {
        snprintf(load_error, sizeof load_error, "%s has ABI %d; Roost needs %d (libvips 8)", name, abi, ROOST_VIPS_ABI);
        return;
    }
    if (vipsapi.init("roostd") != 0) {
        char *text = vipsapi.error_buffer_copy();
        snprintf(load_error, sizeof load_error, "%s failed to start: %s", name, text && *text ? text : "vips_init failed");
        vipsapi.g_free(text);
        return;
    }
    if (!enums_match()) return;
    /* liborc's run-time generated SIMD code crashed a worker under load
       (SIGSEGV inside liborc-0.4.so.0.33 while draining thumbnails); plain
       C paths are a little slower and never JIT code. */
    vipsapi.vector_set_enabled(0);
    /* Roost parallelises across images (one per pool thread), so each
       operation gets one thread; the operation cache is off because every
       image is a different one: it would only hold memory and descriptors. */
    vipsapi.concurrency_set(1);
    vipsapi.cache_set_max(0);
    vipsapi.cache_set_max_mem(0);
    vipsapi.cache_set_max_files(0);
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

int roost_vips_ready(char *err, size_t errlen) {
    pthread_once(&load_once, load);
    int ok = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
    if (!ok && err && errlen > 0) snprintf(err, errlen, "%s", load_error);
    return ok;
}

int roost_vips_start(char *err, size_t errlen) { return roost_vips_ready(err, errlen) ? 0 : -1; }

int roost_vips_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }
