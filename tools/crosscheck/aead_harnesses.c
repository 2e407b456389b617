// What differs between pqprof's AES-256-GCM encrypt call and `openssl speed -evp aes-256-gcm
// -aead`'s, measured: the same vendored OpenSSL, 16,384-byte records, every variant timed in
// turn in one process on one pinned core (aead-harnesses.sh builds and runs it).
//
//   speed     openssl speed's loop (apps/speed.c, EVP_Update_loop_aead_enc): key and IV set
//             every call (EVP_CipherInit_ex), 13 bytes of AAD, one buffer encrypted in place
//             again and again, nothing between two calls.
//   pqprof    pqprof's call (src/backend/openssl.rs, GcmKey::seal): IV only on a keyed context,
//             5 bytes of AAD (the record header), in place; before each call, outside the timed
//             region, the plaintext is copied into the record's buffer, and a sample times two
//             records (pqprof's batch for this phase) in two buffers.
//   one-hot   pqprof's call on one buffer, no copy between calls (speed's memory, pqprof's call).
//   rekey     speed's call (key, IV, 13-byte AAD) with pqprof's memory (copy, two buffers).
//   speed-block  speed's loop timed as openssl speed times it: one clock reading around all of a
//             round's calls, the mean per call (no median).
//
// Each variant's figure is the mean and median ns per call over ROUNDS x CALLS calls; the order
// of the variants turns every round so drift falls on all alike.
#define _GNU_SOURCE
#include <openssl/evp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LEN = 16384, ROUNDS = 40, CALLS = 500, VARIANTS = 5 };

static uint8_t key[32], iv[12], aad13[13], aad5[5] = {23, 3, 3, 0x40, 0x10}, tag[16];
static uint8_t plain[LEN], rec[2][LEN + 16];
static double samples[VARIANTS][ROUNDS * CALLS];

static inline uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void die(const char *what) {
    fprintf(stderr, "aead_harnesses: %s failed\n", what);
    exit(1);
}

// One call; `rekey`: set the key too and use 13 bytes of AAD (speed), else the IV and 5 (pqprof).
static void seal(EVP_CIPHER_CTX *ctx, uint8_t *buf, int rekey) {
    int outl;
    if (!EVP_CipherInit_ex(ctx, NULL, NULL, rekey ? key : NULL, iv, -1)) die("init");
    if (!EVP_CipherUpdate(ctx, NULL, &outl, rekey ? aad13 : aad5, rekey ? 13 : 5)) die("aad");
    if (!EVP_CipherUpdate(ctx, buf, &outl, buf, LEN)) die("update");
    if (!EVP_CipherFinal_ex(ctx, buf + LEN, &outl)) die("final");
    if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag)) die("tag");
}

// A sample of variant v: the calls it times, the copies it makes before the clock.
static double sample(EVP_CIPHER_CTX *ctx, int v) {
    int pqprof_memory = (v == 1 || v == 3), rekey = (v == 0 || v == 3);
    if (pqprof_memory) {
        memcpy(rec[0], plain, LEN);
        memcpy(rec[1], plain, LEN);
        uint64_t t0 = now_ns();
        seal(ctx, rec[0], rekey);
        seal(ctx, rec[1], rekey);
        return (double)(now_ns() - t0) / 2.0;
    }
    uint64_t t0 = now_ns();
    seal(ctx, rec[0], rekey);
    return (double)(now_ns() - t0);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(1, &set);
    sched_setaffinity(0, sizeof set, &set);
    for (int i = 0; i < LEN; i++) plain[i] = (uint8_t)(i * 131 + 7);
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i + 1);
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, iv)) die("setup");
    for (int w = 0; w < 2000; w++) seal(ctx, rec[0], w & 1);
    for (int r = 0; r < ROUNDS; r++)
        for (int j = 0; j < VARIANTS; j++) {
            int v = (j + r) % VARIANTS;
            if (v == 4) {
                uint64_t t0 = now_ns();
                for (int c = 0; c < CALLS; c++) seal(ctx, rec[0], 1);
                double per = (double)(now_ns() - t0) / CALLS;
                for (int c = 0; c < CALLS; c++) samples[v][r * CALLS + c] = per;
                continue;
            }
            for (int c = 0; c < CALLS; c++) samples[v][r * CALLS + c] = sample(ctx, v);
        }
    const char *names[VARIANTS] = {"speed (key+IV, 13 B AAD, one hot buffer)",
                                   "pqprof (IV, 5 B AAD, copy, two buffers)",
                                   "one-hot (IV, 5 B AAD, one hot buffer)",
                                   "rekey (key+IV, 13 B AAD, copy, two buffers)",
                                   "speed-block (speed's loop, one clock per round)"};
    double mean0 = 0;
    for (int v = 0; v < VARIANTS; v++) {
        double sum = 0;
        for (int i = 0; i < ROUNDS * CALLS; i++) sum += samples[v][i];
        double mean = sum / (ROUNDS * CALLS);
        qsort(samples[v], ROUNDS * CALLS, sizeof(double), cmp);
        if (v == 0) mean0 = mean;
        printf("%-48s mean %7.1f ns  median %7.1f ns  mean vs speed %+5.1f%%\n", names[v], mean,
               samples[v][ROUNDS * CALLS / 2], (mean / mean0 - 1) * 100);
    }
    EVP_CIPHER_CTX_free(ctx);
    return 0;
}
