#include "roost_vips.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <vips/vips.h>
#include <vips/vector.h>

static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static int start_result = -1;
static const char *start_program = "roostd";
static int start_concurrency = 1;
static int start_cache_max = 0;
static size_t start_cache_max_mem = 0;

static void do_start(void) {
    if (VIPS_INIT(start_program) != 0) { start_result = -1; return; }
    /* liborc's run-time generated SIMD code crashed a worker under load
       (SIGSEGV inside liborc-0.4.so.0.33 while draining thumbnails); plain
       C paths are a little slower and never JIT code. */
    vips_vector_set_enabled(0);
    vips_concurrency_set(start_concurrency);
    vips_cache_set_max(start_cache_max);
    vips_cache_set_max_mem(start_cache_max_mem);
    vips_cache_set_max_files(start_cache_max > 0 ? 16 : 0);
    start_result = 0;
}

int roost_vips_start(const char *program, int concurrency, int cache_max, size_t cache_max_mem) {
    start_program = program ? program : "roostd";
    start_concurrency = concurrency > 0 ? concurrency : 1;
    start_cache_max = cache_max;
    start_cache_max_mem = cache_max_mem;
    pthread_once(&start_once, do_start);
    return start_result;
}

/// Copies libvips' error text for this failure into `err` and clears it.
static void take_error(const char *fallback, char *err, size_t errlen) {
    if (!err || errlen == 0) { vips_error_clear(); return; }
    char *text = vips_error_buffer_copy();
    const char *message = (text && *text) ? text : fallback;
    snprintf(err, errlen, "%s", message);
    // The buffer ends with a newline; keep the sentence clean.
    size_t n = strlen(err);
    while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' ')) err[--n] = 0;
    g_free(text);
}

int roost_vips_probe(const void *buf, size_t len, roost_vips_header *out, char *err, size_t errlen) {
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    VipsImage *image = vips_image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) { take_error("unreadable image header", err, errlen); return -1; }
    out->width = vips_image_get_width(image);
    out->height = vips_image_get_height(image);
    out->bands = vips_image_get_bands(image);
    snprintf(out->loader, sizeof out->loader, "%s", loader);
    g_object_unref(image);
    return 0;
}

int roost_vips_validate(const void *buf, size_t len, char *err, size_t errlen) {
    const char *loader = vips_foreign_find_load_buffer(buf, len);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    /* JPEG: the scaled IDCT still reads every entropy-coded byte. */
    const char *options = strncmp(loader, "VipsForeignLoadJpeg", 19) == 0 ? "shrink=8" : "";
    VipsImage *image = vips_image_new_from_buffer(buf, len, options, "access", VIPS_ACCESS_SEQUENTIAL,
                                                  "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) { take_error("unreadable image", err, errlen); return -1; }
    double mean = 0;
    int rc = vips_avg(image, &mean, NULL);
    g_object_unref(image);
    if (rc != 0) { take_error("the image data is corrupt or truncated", err, errlen); return -1; }
    return 0;
}

static int save(VipsImage *image, int format, int quality, void **out, size_t *out_len) {
    switch (format) {
    case ROOST_VIPS_JPEG:
        return vips_jpegsave_buffer(image, out, out_len, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
    case ROOST_VIPS_WEBP:
        return vips_webpsave_buffer(image, out, out_len, "Q", quality, "strip", TRUE, "effort", 2, NULL);
    case ROOST_VIPS_PNG:
        return vips_pngsave_buffer(image, out, out_len, "strip", TRUE, NULL);
    case ROOST_VIPS_GIF:
        return vips_gifsave_buffer(image, out, out_len, NULL);
    default:
        vips_error("roost", "unknown output format %d", format);
        return -1;
    }
}

/* The largest power-of-two shrink (1, 2, 4 or 8) that keeps the decoded
   image at least as large as the box needs. JPEG (scaled IDCT) and WebP
   (scaled decode) can shrink while decoding, which is most of a thumbnail's
   cost; libvips' own choice leaves a further factor of two for quality,
   which doubles the decode on this path. */
static int load_shrink(VipsImage *header, int width, int height, int crop) {
    int w = vips_image_get_width(header), h = vips_image_get_height(header);
    int orientation = 1;
    if (vips_image_get_typeof(header, VIPS_META_ORIENTATION)) vips_image_get_int(header, VIPS_META_ORIENTATION, &orientation);
    if (orientation >= 5 && orientation <= 8) { int t = w; w = h; h = t; } /* the box applies after rotation */
    double fw = (double)w / width, fh = (double)h / height;
    double factor = crop ? (fw < fh ? fw : fh) : (fw > fh ? fw : fh);
    int shrink = 1;
    while (shrink < 8 && factor >= shrink * 2) shrink *= 2;
    return shrink;
}

int roost_vips_thumbnail_file(const char *path, int width, int height, int crop, int format, int quality,
                              void **out, size_t *out_len, int *out_width, int *out_height,
                              char *err, size_t errlen) {
    const char *loader = vips_foreign_find_load(path);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    VipsImage *header = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!header) { take_error("unreadable image", err, errlen); return -1; }
    int shrink = load_shrink(header, width, height, crop);
    g_object_unref(header);
    VipsImage *source = NULL;
    if (shrink > 1 && strncmp(loader, "VipsForeignLoadJpeg", 19) == 0) {
        source = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "shrink", shrink, NULL);
    } else if (shrink > 1 && strncmp(loader, "VipsForeignLoadWebp", 19) == 0) {
        source = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "scale", 1.0 / shrink, NULL);
    } else {
        source = vips_image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    }
    if (!source) { take_error("unreadable image", err, errlen); return -1; }
    /* vips_thumbnail_image: EXIF orientation, colour profile, alpha and the
       final resize (no second shrink-on-load: the decode above did it). */
    VipsImage *thumb = NULL;
    int rc = vips_thumbnail_image(source, &thumb, width, "height", height, "size", VIPS_SIZE_DOWN,
                                  "crop", crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE, NULL);
    g_object_unref(source);
    if (rc != 0 || !thumb) { take_error("cannot make a thumbnail", err, errlen); return -1; }
    *out_width = vips_image_get_width(thumb);
    *out_height = vips_image_get_height(thumb);
    rc = save(thumb, format, quality, out, out_len);
    g_object_unref(thumb);
    if (rc != 0) { take_error("cannot encode the thumbnail", err, errlen); return -1; }
    return 0;
}

int roost_vips_synthesize(int width, int height, int format, void **out, size_t *out_len, char *err, size_t errlen) {
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *rx = NULL, *ry = NULL, *bands[3] = {NULL, NULL, NULL};
    VipsImage *joined = NULL, *rgb = NULL;
    int rc = -1;
    if (vips_xyz(&xyz, width, height, NULL)) goto done;
    if (vips_extract_band(xyz, &x, 0, NULL) || vips_extract_band(xyz, &y, 1, NULL)) goto done;
    if (vips_remainder_const1(x, &rx, 256, NULL) || vips_remainder_const1(y, &ry, 256, NULL)) goto done;
    if (vips_cast_uchar(rx, &bands[0], NULL) || vips_cast_uchar(ry, &bands[1], NULL)) goto done;
    if (vips_invert(bands[0], &bands[2], NULL)) goto done;
    if (vips_bandjoin(bands, &joined, 3, NULL)) goto done;
    if (vips_copy(joined, &rgb, "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    rc = save(rgb, format, 85, out, out_len);
done:
    if (rc != 0) take_error("cannot synthesize an image", err, errlen);
    VipsImage *all[] = {xyz, x, y, rx, ry, bands[0], bands[1], bands[2], joined, rgb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) if (all[i]) g_object_unref(all[i]);
    return rc == 0 ? 0 : -1;
}

int roost_vips_test_encode(int width, int height, int bands, int pages, const char *suffix,
                           void **out, size_t *out_len, char *err, size_t errlen) {
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *rx = NULL, *ry = NULL, *bandv[4] = {NULL, NULL, NULL, NULL};
    VipsImage *joined = NULL, *image = NULL;
    int rc = -1;
    if ((bands != 1 && bands != 3 && bands != 4) || pages < 1) { vips_error("roost", "bad test image shape"); goto done; }
    if (vips_xyz(&xyz, width, height * pages, NULL)) goto done;
    if (vips_extract_band(xyz, &x, 0, NULL) || vips_extract_band(xyz, &y, 1, NULL)) goto done;
    if (vips_remainder_const1(x, &rx, 256, NULL) || vips_remainder_const1(y, &ry, 256, NULL)) goto done;
    if (vips_cast_uchar(rx, &bandv[0], NULL) || vips_cast_uchar(ry, &bandv[1], NULL)) goto done;
    if (vips_invert(bandv[0], &bandv[2], NULL) || vips_invert(bandv[1], &bandv[3], NULL)) goto done;
    /* Grey is the x gradient; RGB(A) are x, y, inverted x (and inverted y as alpha). */
    if (vips_bandjoin(bandv, &joined, bands, NULL)) goto done;
    if (vips_copy(joined, &image, "interpretation", bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    if (pages > 1) vips_image_set_int(image, "page-height", height);
    rc = vips_image_write_to_buffer(image, suffix, out, out_len, NULL);
done:
    if (rc != 0) take_error("cannot encode a test image", err, errlen);
    VipsImage *all[] = {xyz, x, y, rx, ry, bandv[0], bandv[1], bandv[2], bandv[3], joined, image};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) if (all[i]) g_object_unref(all[i]);
    return rc == 0 ? 0 : -1;
}

void roost_vips_free(void *p) { g_free(p); }

void roost_vips_thread_end(void) { vips_thread_shutdown(); }
