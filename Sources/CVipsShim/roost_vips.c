// Non-variadic wrappers around libvips, called through the function pointers
// vips_loader.c resolves at the first image (variadic calls stay in C).
#include "roost_vips.h"
#include "vips_api.h"

#include <stdio.h>
#include <string.h>

/// Copies libvips' error text for this failure into `err` and clears it.
static void take_error(const char *fallback, char *err, size_t errlen) {
    if (!err || errlen == 0) { vipsapi.error_clear(); return; }
    char *text = vipsapi.error_buffer_copy();
    const char *message = (text && *text) ? text : fallback;
    snprintf(err, errlen, "%s", message);
    // The buffer ends with a newline; keep the sentence clean.
    size_t n = strlen(err);
    while (n > 0 && (err[n - 1] == '\n' || err[n - 1] == ' ')) err[--n] = 0;
    vipsapi.g_free(text);
}

int roost_vips_probe(const void *buf, size_t len, roost_vips_header *out, char *err, size_t errlen) {
    if (!roost_vips_ready(err, errlen)) return -1;
    const char *loader = vipsapi.foreign_find_load_buffer(buf, len);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    VipsImage *image = vipsapi.image_new_from_buffer(buf, len, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!image) { take_error("unreadable image header", err, errlen); return -1; }
    out->width = vipsapi.image_get_width(image);
    out->height = vipsapi.image_get_height(image);
    out->bands = vipsapi.image_get_bands(image);
    snprintf(out->loader, sizeof out->loader, "%s", loader);
    vipsapi.g_object_unref(image);
    return 0;
}

int roost_vips_validate(const void *buf, size_t len, char *err, size_t errlen) {
    if (!roost_vips_ready(err, errlen)) return -1;
    const char *loader = vipsapi.foreign_find_load_buffer(buf, len);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    /* JPEG: the scaled IDCT still reads every entropy-coded byte. */
    const char *options = strncmp(loader, "VipsForeignLoadJpeg", 19) == 0 ? "shrink=8" : "";
    VipsImage *image = vipsapi.image_new_from_buffer(buf, len, options, "access", VIPS_ACCESS_SEQUENTIAL,
                                                  "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
    if (!image) { take_error("unreadable image", err, errlen); return -1; }
    double mean = 0;
    int rc = vipsapi.avg(image, &mean, NULL);
    vipsapi.g_object_unref(image);
    if (rc != 0) { take_error("the image data is corrupt or truncated", err, errlen); return -1; }
    return 0;
}

static int save(VipsImage *image, int format, int quality, void **out, size_t *out_len) {
    switch (format) {
    case ROOST_VIPS_JPEG:
        return vipsapi.jpegsave_buffer(image, out, out_len, "Q", quality, "strip", ROOST_TRUE, "optimize_coding", ROOST_TRUE, NULL);
    case ROOST_VIPS_WEBP:
        return vipsapi.webpsave_buffer(image, out, out_len, "Q", quality, "strip", ROOST_TRUE, "effort", 2, NULL);
    case ROOST_VIPS_PNG:
        return vipsapi.pngsave_buffer(image, out, out_len, "strip", ROOST_TRUE, NULL);
    case ROOST_VIPS_GIF:
        return vipsapi.gifsave_buffer(image, out, out_len, NULL);
    default:
        vipsapi.error("roost", "unknown output format %d", format);
        return -1;
    }
}

/* The largest power-of-two shrink (1, 2, 4 or 8) that keeps the decoded
   image at least as large as the box needs. JPEG (scaled IDCT) and WebP
   (scaled decode) can shrink while decoding, which is most of a thumbnail's
   cost; libvips' own choice leaves a further factor of two for quality,
   which doubles the decode on this path. */
static int load_shrink(VipsImage *header, int width, int height, int crop) {
    int w = vipsapi.image_get_width(header), h = vipsapi.image_get_height(header);
    int orientation = 1;
    if (vipsapi.image_get_typeof(header, VIPS_META_ORIENTATION)) vipsapi.image_get_int(header, VIPS_META_ORIENTATION, &orientation);
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
    if (!roost_vips_ready(err, errlen)) return -1;
    const char *loader = vipsapi.foreign_find_load(path);
    if (!loader) { take_error("not a known image format", err, errlen); return -1; }
    VipsImage *header = vipsapi.image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (!header) { take_error("unreadable image", err, errlen); return -1; }
    int shrink = load_shrink(header, width, height, crop);
    vipsapi.g_object_unref(header);
    VipsImage *source = NULL;
    if (shrink > 1 && strncmp(loader, "VipsForeignLoadJpeg", 19) == 0) {
        source = vipsapi.image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "shrink", shrink, NULL);
    } else if (shrink > 1 && strncmp(loader, "VipsForeignLoadWebp", 19) == 0) {
        source = vipsapi.image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR,
                                          "scale", 1.0 / shrink, NULL);
    } else {
        source = vipsapi.image_new_from_file(path, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", VIPS_FAIL_ON_ERROR, NULL);
    }
    if (!source) { take_error("unreadable image", err, errlen); return -1; }
    /* vips_thumbnail_image: EXIF orientation, colour profile, alpha and the
       final resize (no second shrink-on-load: the decode above did it). */
    VipsImage *thumb = NULL;
    int rc = vipsapi.thumbnail_image(source, &thumb, width, "height", height, "size", VIPS_SIZE_DOWN,
                                  "crop", crop ? VIPS_INTERESTING_CENTRE : VIPS_INTERESTING_NONE, NULL);
    vipsapi.g_object_unref(source);
    if (rc != 0 || !thumb) { take_error("cannot make a thumbnail", err, errlen); return -1; }
    *out_width = vipsapi.image_get_width(thumb);
    *out_height = vipsapi.image_get_height(thumb);
    rc = save(thumb, format, quality, out, out_len);
    vipsapi.g_object_unref(thumb);
    if (rc != 0) { take_error("cannot encode the thumbnail", err, errlen); return -1; }
    return 0;
}

int roost_vips_synthesize(int width, int height, int format, void **out, size_t *out_len, char *err, size_t errlen) {
    if (!roost_vips_ready(err, errlen)) return -1;
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *rx = NULL, *ry = NULL, *bands[3] = {NULL, NULL, NULL};
    VipsImage *joined = NULL, *rgb = NULL;
    int rc = -1;
    if (vipsapi.xyz(&xyz, width, height, NULL)) goto done;
    if (vipsapi.extract_band(xyz, &x, 0, NULL) || vipsapi.extract_band(xyz, &y, 1, NULL)) goto done;
    if (vipsapi.remainder_const1(x, &rx, 256, NULL) || vipsapi.remainder_const1(y, &ry, 256, NULL)) goto done;
    if (vipsapi.cast_uchar(rx, &bands[0], NULL) || vipsapi.cast_uchar(ry, &bands[1], NULL)) goto done;
    if (vipsapi.invert(bands[0], &bands[2], NULL)) goto done;
    if (vipsapi.bandjoin(bands, &joined, 3, NULL)) goto done;
    if (vipsapi.copy(joined, &rgb, "interpretation", VIPS_INTERPRETATION_sRGB, NULL)) goto done;
    rc = save(rgb, format, 85, out, out_len);
done:
    if (rc != 0) take_error("cannot synthesize an image", err, errlen);
    VipsImage *all[] = {xyz, x, y, rx, ry, bands[0], bands[1], bands[2], joined, rgb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) if (all[i]) vipsapi.g_object_unref(all[i]);
    return rc == 0 ? 0 : -1;
}

int roost_vips_test_encode(int width, int height, int bands, int pages, const char *suffix,
                           void **out, size_t *out_len, char *err, size_t errlen) {
    if (!roost_vips_ready(err, errlen)) return -1;
    VipsImage *xyz = NULL, *x = NULL, *y = NULL, *rx = NULL, *ry = NULL, *bandv[4] = {NULL, NULL, NULL, NULL};
    VipsImage *joined = NULL, *image = NULL;
    int rc = -1;
    if ((bands != 1 && bands != 3 && bands != 4) || pages < 1) { vipsapi.error("roost", "bad test image shape"); goto done; }
    if (vipsapi.xyz(&xyz, width, height * pages, NULL)) goto done;
    if (vipsapi.extract_band(xyz, &x, 0, NULL) || vipsapi.extract_band(xyz, &y, 1, NULL)) goto done;
    if (vipsapi.remainder_const1(x, &rx, 256, NULL) || vipsapi.remainder_const1(y, &ry, 256, NULL)) goto done;
    if (vipsapi.cast_uchar(rx, &bandv[0], NULL) || vipsapi.cast_uchar(ry, &bandv[1], NULL)) goto done;
    if (vipsapi.invert(bandv[0], &bandv[2], NULL) || vipsapi.invert(bandv[1], &bandv[3], NULL)) goto done;
    /* Grey is the x gradient; RGB(A) are x, y, inverted x (and inverted y as alpha). */
    if (vipsapi.bandjoin(bandv, &joined, bands, NULL)) goto done;
    if (vipsapi.copy(joined, &image, "interpretation", bands == 1 ? VIPS_INTERPRETATION_B_W : VIPS_INTERPRETATION_sRGB, NULL))
        goto done;
    if (pages > 1) vipsapi.image_set_int(image, "page-height", height);
    rc = vipsapi.image_write_to_buffer(image, suffix, out, out_len, NULL);
done:
    if (rc != 0) take_error("cannot encode a test image", err, errlen);
    VipsImage *all[] = {xyz, x, y, rx, ry, bandv[0], bandv[1], bandv[2], bandv[3], joined, image};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) if (all[i]) vipsapi.g_object_unref(all[i]);
    return rc == 0 ? 0 : -1;
}

void roost_vips_free(void *p) {
    if (p && roost_vips_loaded()) vipsapi.g_free(p);
}

void roost_vips_thread_end(void) {
    if (roost_vips_loaded()) vipsapi.thread_shutdown();
}
