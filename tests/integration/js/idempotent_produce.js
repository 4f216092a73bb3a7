// KafkaJS idempotent producer for the integration tests. Prints one JSON object on stdout.
//   node idempotent_produce.js BROKER TOPIC KEYS PER_KEY MAX_IN_FLIGHT
// Sends are awaited one after the other (KafkaJS serialises idempotent produce requests per
// broker anyway); each carries interleaved keys, so every key spans many batches.
'use strict';
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = require('kafkajs');

const [, , broker, topic, keysArg, perKeyArg, inFlightArg] = process.argv;
const keys = Number(keysArg);
const perKey = Number(perKeyArg);
const kafka = new Kafka({
  clientId: 'brokerd-it-idempotent',
  brokers: [broker],
  logLevel: logLevel.NOTHING,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { initialRetryTime: 50, maxRetryTime: 1000, retries: 30 },
});

async function main() {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: Number(inFlightArg),
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  let acked = 0;
  let sends = 0;
  const errors = [];
  try {
    for (let seq = 0; seq < perKey; seq += 2) {
      const messages = [];
      for (let s = seq; s < Math.min(seq + 2, perKey); ++s) {
        for (let k = 0; k < keys; ++k) messages.push({ key: `js-key${k}`, value: `js-key${k}:${s}` });
      }
      const res = await producer.send({ topic, messages, acks: -1 });
      sends += 1;
      for (const r of res) {
        if (r.errorCode !== 0) errors.push(r);
      }
      acked += messages.length;
    }
  } finally {
    await producer.disconnect();
  }
  return { acked, sends, errors };
}

const deadline = setTimeout(() => {
  console.error('timed out');
  process.exit(2);
}, 150000);
main()
  .then((out) => {
    clearTimeout(deadline);
    console.log(JSON.stringify(out));
  })
  .catch((e) => {
    clearTimeout(deadline);
    console.error(e && e.stack ? e.stack : String(e));
    process.exit(1);
  });
