/* test_jsonio.c - the JSON writer, the UTF-8 sanitiser and the typed getters
 * (runtime/util/jsonio.c): every kind of invalid UTF-8, control characters,
 * non-finite and large numbers, misuse, and a record written and read back
 * field by field; the positioned tree's getters (runtime/util/json.h), same
 * convention.
 */
#define _POSIX_C_SOURCE 200809L

#include "../runtime/util/json.h"
#include "../runtime/util/jsonio.h"
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FFFD "\xEF\xBF\xBD"

/* cg_utf8_sanitize(in) == want; also: the result is valid. */
static int sanitizes_to(const char *in, const char *want)
{
    char *got = cg_utf8_sanitize(in);
    int ok = got != NULL && strcmp(got, want) == 0 && cg_utf8_valid(got);
    if (!ok) {
        fprintf(stdout, "  sanitize: got \"%s\", want \"%s\"\n", got ? got : "(null)", want);
    }
    free(got);
    return ok;
}

static void sanitizer_should_keep_valid_utf8_of_every_length(void)
{
    /* 1, 2, 3 and 4 bytes, the edges of each range included. */
    const char *ok[] = {"plain ascii", "caf\xC3\xA9", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80",
                        "\xE2\x82\xAC", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF",
                        "\xF0\x90\x80\x80", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", ""};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        CHECKF(cg_utf8_valid(ok[i]), "case %zu", i);
        CHECK(sanitizes_to(ok[i], ok[i]));
    }
}

static void sanitizer_should_replace_a_lone_continuation_byte(void)
{
    CHECK(!cg_utf8_valid("a\x80" "b"));
    CHECK(sanitizes_to("a\x80" "b", "a" FFFD "b"));
    CHECK(sanitizes_to("\xBF", FFFD));
    /* one after a complete sequence: the sequence stays, the extra goes */
    CHECK(sanitizes_to("\xC3\xA9\xA9", "\xC3\xA9" FFFD));
}

static void sanitizer_should_replace_a_truncated_sequence(void)
{
    /* at the end of the string, and before an ASCII byte: each lead and
     * continuation byte of the incomplete sequence is one U+FFFD */
    CHECK(!cg_utf8_valid("x\xE2\x82"));
    CHECK(sanitizes_to("x\xE2\x82", "x" FFFD FFFD));
    CHECK(sanitizes_to("\xC3" "A", FFFD "A"));
    CHECK(sanitizes_to("\xF0\x9F\x98" "!", FFFD FFFD FFFD "!"));
}

static void sanitizer_should_replace_overlong_forms(void)
{
    CHECK(!cg_utf8_valid("\xC0\xAF"));                    /* '/' in 2 bytes */
    CHECK(sanitizes_to("\xC0\xAF", FFFD FFFD));
    CHECK(sanitizes_to("\xC1\xBF", FFFD FFFD));
    CHECK(sanitizes_to("\xE0\x80\xAF", FFFD FFFD FFFD));  /* '/' in 3 bytes */
    CHECK(sanitizes_to("\xF0\x80\x80\xAF", FFFD FFFD FFFD FFFD)); /* in 4 */
    CHECK(sanitizes_to("\xC0\x80", FFFD FFFD));           /* "modified UTF-8" NUL */
}

static void sanitizer_should_replace_surrogates(void)
{
    CHECK(!cg_utf8_valid("\xED\xA0\x80"));              /* U+D800 */
    CHECK(sanitizes_to("\xED\xA0\x80", FFFD FFFD FFFD));
    CHECK(sanitizes_to("\xED\xBF\xBF", FFFD FFFD FFFD)); /* U+DFFF */
    CHECK(sanitizes_to("\xED\xA0\xBD\xED\xB8\x80", FFFD FFFD FFFD FFFD FFFD FFFD)); /* CESU pair */
}

static void sanitizer_should_replace_values_past_u10ffff_and_bytes_f5_to_ff(void)
{
    CHECK(!cg_utf8_valid("\xF4\x90\x80\x80"));              /* U+110000 */
    CHECK(sanitizes_to("\xF4\x90\x80\x80", FFFD FFFD FFFD FFFD));
    CHECK(sanitizes_to("\xF7\xBF\xBF\xBF", FFFD FFFD FFFD FFFD)); /* U+1FFFFF */
    CHECK(sanitizes_to("\xF8\x88\x80\x80\x80", FFFD FFFD FFFD FFFD FFFD)); /* 5-byte form */
    CHECK(sanitizes_to("\xFE\xFF", FFFD FFFD));
}

/* Writes one string under "s" and returns the printed line (free()). */
static char *line_with_string(const char *s)
{
    struct cg_jw w;
    char *text;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_str(&w, "s", s);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, NULL);
    cg_jw_free(&w);
    return text;
}

static void writer_should_escape_control_characters_and_quotes(void)
{
    char *text = line_with_string("a\"b\\c\n\t\r\b\f\x01\x1f" "d");
    CHECK(text != NULL);
    if (text != NULL) {
        CHECKF(strcmp(text, "{\"s\":\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\\u001fd\"}\n") == 0, "%s",
               text);
        cJSON *back = cJSON_Parse(text);
        const char *s = NULL;
        CHECK(cg_jget_str(back, "s", &s) == 0 && strcmp(s, "a\"b\\c\n\t\r\b\f\x01\x1f" "d") == 0);
        cJSON_Delete(back);
    }
    free(text);
}

static void writer_should_write_invalid_utf8_as_u_fffd_in_strings_and_keys(void)
{
    struct cg_jw w;
    char *text;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_str(&w, "host", "node\xFF" "1");
    cg_jw_obj(&w, "env");
    cg_jw_str(&w, "K\xC0\xAF", "v\xED\xA0\x80");
    cg_jw_end(&w);
    cg_jw_arr(&w, "list");
    cg_jw_str(&w, NULL, "\x80");
    cg_jw_end(&w);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, NULL);
    cg_jw_free(&w);
    CHECK(text != NULL && cg_utf8_valid(text));
    if (text != NULL) {
        CHECKF(strcmp(text, "{\"host\":\"node" FFFD "1\",\"env\":{\"K" FFFD FFFD "\":\"v" FFFD FFFD
                            FFFD "\"},\"list\":[\"" FFFD "\"]}\n") == 0,
               "%s", text);
    }
    free(text);
    /* cJSON items built directly take the same path */
    cJSON *o = cJSON_CreateObject();
    CHECK(cg_json_add(o, "e\xE2\x82", cg_json_string("\xF4\x90\x80\x80")) == 0);
    text = cJSON_PrintUnformatted(o);
    CHECKF(text != NULL && strcmp(text, "{\"e" FFFD FFFD "\":\"" FFFD FFFD FFFD FFFD "\"}") == 0,
           "%s", text);
    cJSON_free(text);
    cJSON_Delete(o);
}

static void writer_should_write_non_finite_numbers_as_null(void)
{
    struct cg_jw w;
    char *text;
    cg_jw_init(&w);
    cg_jw_arr(&w, NULL);
    cg_jw_num(&w, NULL, NAN);
    cg_jw_num(&w, NULL, INFINITY);
    cg_jw_num(&w, NULL, -INFINITY);
    cg_jw_num(&w, NULL, 1.5);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, NULL);
    cg_jw_free(&w);
    CHECKF(text != NULL && strcmp(text, "[null,null,null,1.5]\n") == 0, "%s", text);
    free(text);
    cJSON *n = cg_json_number(NAN);
    CHECK(cJSON_IsNull(n));
    cJSON_Delete(n);
}

static void writer_should_print_integers_in_full_and_doubles_as_cjson_does(void)
{
    struct cg_jw w;
    char *text;
    cg_jw_init(&w);
    cg_jw_arr(&w, NULL);
    cg_jw_int(&w, NULL, 0);
    cg_jw_int(&w, NULL, -7);
    cg_jw_int(&w, NULL, 3000000000LL);
    cg_jw_int(&w, NULL, 1000000000000000LL);      /* %.15g would say 1e+15 */
    cg_jw_int(&w, NULL, INT64_MAX);               /* past 2^53 */
    cg_jw_int(&w, NULL, INT64_MIN);
    cg_jw_uint(&w, NULL, UINT64_MAX);
    cg_jw_num(&w, NULL, 0.05);
    cg_jw_num(&w, NULL, 1.0 / 3.0);               /* %.15g does not read back: %.17g */
    cg_jw_num(&w, NULL, 123456.789);
    cg_jw_bool(&w, NULL, 1);
    cg_jw_bool(&w, NULL, 0);
    cg_jw_null(&w, NULL);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, NULL);
    cg_jw_free(&w);
    CHECKF(text != NULL &&
               strcmp(text, "[0,-7,3000000000,1000000000000000,9223372036854775807,"
                            "-9223372036854775808,18446744073709551615,0.05,0.33333333333333331,"
                            "123456.789,true,false,null]\n") == 0,
           "%s", text);
    if (text != NULL) {
        cJSON *back = cJSON_Parse(text);
        CHECK(cJSON_GetArrayItem(back, 8)->valuedouble == 1.0 / 3.0);
        CHECK(cJSON_GetArrayItem(back, 9)->valuedouble == 123456.789);
        cJSON_Delete(back);
    }
    free(text);
}

static void writer_should_refuse_misuse_and_print_nothing(void)
{
    struct cg_jw w;
    size_t len = 99;

    cg_jw_init(&w); /* nothing written */
    CHECK(cg_jw_text(&w, 0, &len) == NULL);
    cg_jw_free(&w);

    cg_jw_init(&w); /* a container left open */
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "a", 1);
    CHECK(cg_jw_text(&w, 0, &len) == NULL);
    cg_jw_free(&w);

    cg_jw_init(&w); /* an end too many */
    cg_jw_obj(&w, NULL);
    cg_jw_end(&w);
    cg_jw_end(&w);
    CHECK(cg_jw_text(&w, 0, &len) == NULL);
    cg_jw_free(&w);

    cg_jw_init(&w); /* a member without a key */
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, NULL, 1);
    cg_jw_end(&w);
    CHECK(cg_jw_text(&w, 0, &len) == NULL);
    cg_jw_free(&w);

    cg_jw_init(&w); /* two documents */
    cg_jw_int(&w, NULL, 1);
    cg_jw_int(&w, NULL, 2);
    CHECK(cg_jw_text(&w, 0, &len) == NULL);
    cg_jw_free(&w);
    CHECK(len == 99);
}

/* A record as bench writes one (harness/FORMATS.md's shape, abridged), read
 * back field by field with the getters. */
static void record_should_read_back_field_by_field(void)
{
    struct cg_jw w;
    cJSON *inner = cJSON_CreateObject();
    char *text;
    size_t len = 0;

    cJSON_AddItemToObject(inner, "algorithm", cg_json_string_or_null(""));
    cJSON_AddItemToObject(inner, "count", cg_json_int(1001));
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_int(&w, "schema_version", 3);
    cg_jw_str(&w, "campaign", "c-\xFF");
    cg_jw_str(&w, "point_id", "p1");
    cg_jw_obj(&w, "launch");
    cg_jw_int(&w, "index", 2);
    cg_jw_int(&w, "of", 5);
    cg_jw_end(&w);
    cg_jw_str(&w, "status", "ok");
    cg_jw_str(&w, "reason", NULL);
    cg_jw_item(&w, "requested", inner);
    cg_jw_copy(&w, "effective", NULL);
    cg_jw_arr(&w, "diff");
    cg_jw_end(&w);
    cg_jw_uint(&w, "size_B", 8008);
    cg_jw_key(&w, "timing"); /* a value whose kind a callee decides */
    cg_jw_obj(&w, NULL);
    cg_jw_num(&w, "median_ns", 12345.678);
    cg_jw_num(&w, "rse", NAN);
    cg_jw_end(&w);
    cg_jw_bool(&w, "in_place", 1);
    cg_jw_end(&w);
    text = cg_jw_text(&w, 0, &len);
    cg_jw_free(&w);
    CHECK(text != NULL && len == strlen(text) && text[len - 1] == '\n' &&
          strchr(text, '\n') == text + len - 1);
    cJSON *r = text != NULL ? cJSON_Parse(text) : NULL;
    CHECK(r != NULL);
    long long i = -1;
    double d = -1;
    int b = -1;
    const char *s = NULL;
    CHECK(cg_jget_int(r, "schema_version", 0, 10, &i) == 0 && i == 3);
    CHECK(cg_jget_int(r, "schema_version", 4, 10, &i) == -2); /* out of range */
    CHECK(cg_jget_str(r, "campaign", &s) == 0 && strcmp(s, "c-" FFFD) == 0);
    CHECK(cg_jget_str(r, "point_id", &s) == 0 && strcmp(s, "p1") == 0);
    CHECK(cg_jget_int(cg_jget_path(r, "launch"), "index", 1, 100, &i) == 0 && i == 2);
    CHECK(cg_jget_int(cg_jget_path(r, "launch"), "of", 1, 100, &i) == 0 && i == 5);
    CHECK(cg_jget_str(r, "status", &s) == 0 && strcmp(s, "ok") == 0);
    s = "default";
    CHECK(cg_jget_str(r, "reason", &s) == -1 && strcmp(s, "default") == 0); /* null */
    CHECK(cJSON_IsNull(cg_jget_path(r, "requested.algorithm")));
    CHECK(cg_jget_int(cg_jget_path(r, "requested"), "count", 0, 1 << 30, &i) == 0 && i == 1001);
    CHECK(cJSON_IsNull(cg_jget_path(r, "effective")));
    CHECK(cJSON_IsArray(cg_jget_path(r, "diff")) && cJSON_GetArraySize(cg_jget_path(r, "diff")) == 0);
    CHECK(cg_jget_int(r, "size_B", 0, INT64_MAX, &i) == 0 && i == 8008);
    CHECK(cg_jget_num(cg_jget_path(r, "timing"), "median_ns", &d) == 0 && d == 12345.678);
    CHECK(cJSON_IsNull(cg_jget_path(r, "timing.rse")));
    CHECK(cg_jget_num(cg_jget_path(r, "timing"), "rse", &d) == -1);
    CHECK(cg_jget_bool(r, "in_place", &b) == 0 && b == 1);
    /* the wrong type, absent keys, not an object */
    CHECK(cg_jget_num(r, "status", &d) == -2);
    CHECK(cg_jget_str(r, "size_B", &s) == -2);
    CHECK(cg_jget_bool(r, "status", &b) == -2);
    CHECK(cg_jget_int(cg_jget_path(r, "timing"), "median_ns", 0, INT64_MAX, &i) == -2); /* not whole */
    CHECK(cg_jget_num(r, "no_such_key", &d) == -1);
    CHECK(cg_jget_num(NULL, "x", &d) == -1);
    CHECK(cg_jget_path(r, "launch.nope.deeper") == NULL);
    /* key order is the order written (FORMATS.md's) */
    const char *order[] = {"schema_version", "campaign", "point_id", "launch", "status", "reason",
                           "requested", "effective", "diff", "size_B", "timing", "in_place"};
    int k = 0;
    for (const cJSON *it = r != NULL ? r->child : NULL; it != NULL; it = it->next, k++) {
        CHECKF(k < 12 && strcmp(it->string, order[k]) == 0, "key %d: %s", k, it->string);
    }
    CHECK(k == 12);
    cJSON_Delete(r);
    free(text);
}

static void pretty_text_should_parse_to_the_same_tree(void)
{
    struct cg_jw w;
    char *one, *pretty;
    cg_jw_init(&w);
    cg_jw_obj(&w, NULL);
    cg_jw_arr(&w, "command_line");
    cg_jw_str(&w, NULL, "collgen");
    cg_jw_str(&w, NULL, "run");
    cg_jw_end(&w);
    cg_jw_obj(&w, "env");
    cg_jw_end(&w);
    cg_jw_num(&w, "x", 0.1);
    cg_jw_end(&w);
    one = cg_jw_text(&w, 0, NULL);
    pretty = cg_jw_text(&w, 1, NULL);
    cg_jw_free(&w);
    CHECK(one != NULL && pretty != NULL && strchr(pretty, '\t') != NULL);
    if (one != NULL && pretty != NULL) {
        cJSON *a = cJSON_Parse(one), *b = cJSON_Parse(pretty);
        CHECK(a != NULL && b != NULL && cJSON_Compare(a, b, 1));
        cJSON_Delete(a);
        cJSON_Delete(b);
    }
    free(one);
    free(pretty);
}

/* The positioned tree's getters (json.h) keep the same convention, and say
 * where a message points. */
static void positioned_getters_should_share_the_convention(void)
{
    static const char text[] = "{\"n\": 3, \"z\": null, \"s\": \"x\", \"d\": 1.5, \"o\": {}}";
    struct cg_arena arena;
    struct cg_diag d;
    memset(&arena, 0, sizeof(arena));
    cg_diag_init(&d, stderr);
    const struct cg_json *j = cg_json_parse(&arena, &d, "t.json", text, strlen(text));
    const struct cg_json *at = NULL;
    const char *s = "keep";
    double x = -1;
    int64_t i = -1;
    CHECK(j != NULL);
    CHECK(cg_json_get_int(j, "n", 0, 9, &i, &at) == 0 && i == 3 && at->kind == CG_J_NUMBER);
    CHECK(cg_json_get_int(j, "n", 4, 9, &i, &at) == -2 && i == 3);           /* out of range */
    CHECK(cg_json_get_int(j, "d", 0, 9, &i, &at) == -2);                     /* not whole */
    CHECK(cg_json_get_num(j, "d", &x, &at) == 0 && x == 1.5);
    CHECK(cg_json_get_str(j, "s", &s, &at) == 0 && strcmp(s, "x") == 0);
    CHECK(cg_json_get_str(j, "n", &s, &at) == -2 && at->kind == CG_J_NUMBER); /* points at it */
    CHECK(cg_json_get_str(j, "z", &s, &at) == -1 && at != j && at->kind == CG_J_NULL);
    CHECK(cg_json_get_num(j, "nope", &x, &at) == -1 && at == j && x == 1.5);  /* absent: obj */
    CHECK(cg_json_get_kind(j, "o", CG_J_OBJECT, &at) == 0 && at->kind == CG_J_OBJECT);
    CHECK(cg_json_get_kind(j, "o", CG_J_ARRAY, &at) == -2);
    CHECK(d.errors == 0);
    cg_arena_fini(&arena);
}

int main(void)
{
    RUN(sanitizer_should_keep_valid_utf8_of_every_length);
    RUN(sanitizer_should_replace_a_lone_continuation_byte);
    RUN(sanitizer_should_replace_a_truncated_sequence);
    RUN(sanitizer_should_replace_overlong_forms);
    RUN(sanitizer_should_replace_surrogates);
    RUN(sanitizer_should_replace_values_past_u10ffff_and_bytes_f5_to_ff);
    RUN(writer_should_escape_control_characters_and_quotes);
    RUN(writer_should_write_invalid_utf8_as_u_fffd_in_strings_and_keys);
    RUN(writer_should_write_non_finite_numbers_as_null);
    RUN(writer_should_print_integers_in_full_and_doubles_as_cjson_does);
    RUN(writer_should_refuse_misuse_and_print_nothing);
    RUN(record_should_read_back_field_by_field);
    RUN(pretty_text_should_parse_to_the_same_tree);
    RUN(positioned_getters_should_share_the_convention);
    return check_exit();
}
