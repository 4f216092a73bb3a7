/* Produce throughput with and without enable.idempotence against one broker.
 *   cc -O2 -o idempotence_throughput idempotence_throughput.c -lrdkafka
 *   ./idempotence_throughput BOOTSTRAP TOPIC RECORDS VALUE_BYTES ROUNDS
 * Alternates idempotence off/on for ROUNDS rounds each and prints the records/s of every
 * run, then the median of each and their ratio. Every delivery must succeed. */
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long failed;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  if (m->err) ++failed;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double run(const char *bootstrap, const char *topic, long records, int value_bytes, int idempotent) {
  char err[512];
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap, err, sizeof err);
  rd_kafka_conf_set(conf, "enable.idempotence", idempotent ? "true" : "false", err, sizeof err);
  rd_kafka_conf_set(conf, "acks", "all", err, sizeof err);
  rd_kafka_conf_set(conf, "linger.ms", "5", err, sizeof err);
  rd_kafka_conf_set(conf, "max.in.flight.requests.per.connection", "5", err, sizeof err);
  rd_kafka_conf_set(conf, "queue.buffering.max.messages", "1000000", err, sizeof err);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    fprintf(stderr, "%s\n", err);
    exit(1);
  }
  char *value = malloc(value_bytes);
  memset(value, 'x', value_bytes);
  char key[32];
  /* Warm up: metadata and (with idempotence) the producer id. */
  rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_VALUE(value, value_bytes), RD_KAFKA_V_END);
  rd_kafka_flush(rk, 10000);
  failed = 0;
  double start = now_s();
  for (long i = 0; i < records; ++i) {
    int n = snprintf(key, sizeof key, "k%ld", i % 1000);
    for (;;) {
      rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, n),
                                                RD_KAFKA_V_VALUE(value, value_bytes),
                                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      rd_kafka_poll(rk, 1);
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    fprintf(stderr, "flush timed out\n");
    exit(1);
  }
  double rate = records / (now_s() - start);
  if (failed) {
    fprintf(stderr, "%ld deliveries failed\n", failed);
    exit(1);
  }
  rd_kafka_destroy(rk);
  free(value);
  return rate;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: %s BOOTSTRAP TOPIC RECORDS VALUE_BYTES ROUNDS\n", argv[0]);
    return 2;
  }
  long records = atol(argv[3]);
  int value_bytes = atoi(argv[4]), rounds = atoi(argv[5]);
  double *off = calloc(rounds, sizeof *off), *on = calloc(rounds, sizeof *on);
  for (int r = 0; r < rounds; ++r) {
    /* Alternate which goes first, so drift over the run hits both alike. */
    if (r % 2 == 0) {
      off[r] = run(argv[1], argv[2], records, value_bytes, 0);
      on[r] = run(argv[1], argv[2], records, value_bytes, 1);
    } else {
      on[r] = run(argv[1], argv[2], records, value_bytes, 1);
      off[r] = run(argv[1], argv[2], records, value_bytes, 0);
    }
    printf("round %d: idempotence off %.0f rec/s, on %.0f rec/s\n", r, off[r], on[r]);
    fflush(stdout);
  }
  qsort(off, rounds, sizeof *off, cmp);
  qsort(on, rounds, sizeof *on, cmp);
  double mo = off[rounds / 2], mi = on[rounds / 2];
  printf("median: off %.0f rec/s, on %.0f rec/s, on/off %.3f\n", mo, mi, mi / mo);
  return 0;
}
