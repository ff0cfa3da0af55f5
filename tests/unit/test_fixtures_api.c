/* test_fixtures_api.c: the fixture API behind verify, check-fixture and the
 * conformance bundles: families, extra parameters and refusals, inputs. */
#include "sb_test.h"
#include "samebits_cert.h"
#include <string.h>

SB_TEST(test_fixture_families) {
    SB_CHECK(strcmp(sb_fixture_family("profile-core"), "profile") == 0);
    SB_CHECK(strcmp(sb_fixture_family("logit-train"), "logit") == 0);
    SB_CHECK(strcmp(sb_fixture_family("gbdt-extremes"), "gbdt") == 0);
    SB_CHECK(sb_fixture_family("nope") == NULL);
    SB_CHECK(sb_fixture_family(NULL) == NULL);
    for (int32_t i = 0; i < sb_fixture_count(); i++) SB_CHECK(sb_fixture_family(sb_fixture_name(i)) != NULL);
}

SB_TEST(test_fixture_get_family_names_its_failures) {
    /* The status form agrees with sb_fixture_family on every fixture, and says
     * why where the one-value form can only give NULL. */
    const char *family = "untouched";
    for (int32_t i = 0; i < sb_fixture_count(); i++) {
        SB_CHECK(sb_fixture_get_family(sb_fixture_name(i), &family) == SB_OK);
        SB_CHECK(family && strcmp(family, sb_fixture_family(sb_fixture_name(i))) == 0);
    }
    SB_CHECK(sb_fixture_get_family("nope", &family) == SB_ERR_NOT_FOUND);
    SB_CHECK(family == NULL);
    SB_CHECK(strstr(sb_last_error(), "unknown fixture 'nope'") != NULL);
    SB_CHECK(strstr(sb_last_error(), "profile-core") != NULL); /* the list of fixtures */
    SB_CHECK(sb_fixture_get_family(NULL, &family) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_fixture_get_family("profile-core", NULL) == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(sb_fixture_get_family("profile-core", &family) == SB_OK && strcmp(sb_last_error(), "") == 0);
}

static sb_status run_with(const char *name, const char *extra) {
    sb_card *c = NULL;
    sb_status st = sb_card_create(&c);
    if (st == SB_OK) st = sb_fixture_run_with(name, extra, c);
    sb_card_free(c);
    return st;
}

SB_TEST(test_fixture_run_with_refuses_devices_it_lacks) {
    /* Parameterless fixtures: only the cpu, by name; anything else is a refusal
     * or a bad argument, never a silent cpu run. */
    SB_CHECK(run_with("profile-core", "device=cpu") == SB_OK);
    SB_CHECK(run_with("profile-core", " , device=cpu ,") == SB_OK);
    SB_CHECK(run_with("profile-core", "") == SB_OK);
    /* profile-core also runs on a GPU (cuda, opencl) where the build has one;
     * the device names go through the device layer's one parser */
#if !defined(SB_TEST_HAS_CUDA)
    SB_CHECK(run_with("profile-core", "device=cuda") == SB_ERR_BACKEND_UNAVAILABLE);
    SB_CHECK(strstr(sb_last_error(), "'cuda'") != NULL);
#endif
    SB_CHECK(run_with("profile-core", "device=cpu-batched") == SB_ERR_BACKEND_UNAVAILABLE);
    SB_CHECK(run_with("profile-core", "device=cpux") == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(strstr(sb_last_error(), "unknown device 'cpux'") != NULL);
    SB_CHECK(run_with("profile-core", "device=cpu device=opencl") == SB_ERR_INVALID_ARGUMENT);
    SB_CHECK(run_with("logit-train", "seed=3") == SB_ERR_INVALID_ARGUMENT);
    /* Model fixtures pass the device to the family, which refuses by name. */
    SB_CHECK(run_with("gbdt-constant", "device=cuda") == SB_ERR_BACKEND_UNAVAILABLE);
    SB_CHECK(run_with("gbdt-refusals", "device=cuda") == SB_ERR_BACKEND_UNAVAILABLE);
    SB_CHECK(run_with("gbdt-constant", "device=cpu") == SB_OK);
    SB_CHECK(run_with("nope", NULL) == SB_ERR_NOT_FOUND);
}

typedef struct seen {
    int n;
    char names[64][64];
    uint64_t counts[64];
} seen;

static sb_status note(void *ctx, const char *name, sb_dtype dtype, const void *data, uint64_t count) {
    seen *s = ctx;
    (void)dtype;
    (void)data;
    if (s->n == 64) return SB_ERR_LIMIT;
    strcpy(s->names[s->n], name);
    s->counts[s->n++] = count;
    return s->n == 3 && strcmp(name, "train.x") == 0 ? SB_ERR_MISMATCH : SB_OK; /* stops gbdt walks at 3 */
}

SB_TEST(test_fixture_inputs_walk) {
    seen s = {0};
    SB_CHECK(sb_fixture_inputs("gbdt-extremes", note, &s) == SB_ERR_MISMATCH); /* the callback's status */
    SB_CHECK(s.n == 3 && strcmp(s.names[0], "params") == 0 && strcmp(s.names[1], "shape") == 0);
    SB_CHECK(s.counts[1] == 3 && s.counts[2] == 3000u * 8u);
    memset(&s, 0, sizeof s);
    SB_CHECK(sb_fixture_inputs("logit-train", note, &s) == SB_OK);
    SB_CHECK(s.n == 2 && s.counts[0] == 8192u * 12u && s.counts[1] == 8192u);
    memset(&s, 0, sizeof s);
    SB_CHECK(sb_fixture_inputs("gbdt-one-class", note, &s) == SB_ERR_MISMATCH);
    SB_CHECK(sb_fixture_inputs("nope", note, &s) == SB_ERR_NOT_FOUND);
    SB_CHECK(sb_fixture_inputs("profile-core", NULL, &s) == SB_ERR_INVALID_ARGUMENT);
    sb_card *c = NULL;
    for (int32_t i = 0; i < sb_fixture_count(); i++) {
        SB_CHECK(sb_fixture_input_reference(sb_fixture_name(i), &c) == SB_OK);
        sb_card_free(c);
        c = NULL;
    }
    SB_CHECK(sb_fixture_input_reference("nope", &c) == SB_ERR_NOT_FOUND);
}
