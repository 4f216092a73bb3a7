// KafkaJS over SASL and TLS for the integration tests. Prints one JSON object on stdout.
//   node sasl_client.js BROKER MECHANISM USER PASSWORD TOPIC COUNT
// MECHANISM: plain, scram-sha-256, scram-sha-512, or none (no SASL). With BROKERD_TLS_CA set
// (a PEM file), it connects with TLS and trusts that authority. Produces COUNT records, reads
// them back. With BROKERD_TLS_CERT and BROKERD_TLS_KEY also set, it presents that client
// certificate (mutual TLS).
'use strict';
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

const [, , broker, mechanism, username, password, topic, count] = process.argv;
const ca = process.env.BROKERD_TLS_CA;
const kafka = new Kafka({
  clientId: 'brokerd-it-kafkajs-sasl',
  brokers: [broker],
  sasl: mechanism === 'none' ? undefined : { mechanism, username, password },
  ssl: ca ? {
    ca: [fs.readFileSync(ca, 'utf8')],
    ...(process.env.BROKERD_TLS_CERT ? {
      cert: fs.readFileSync(process.env.BROKERD_TLS_CERT, 'utf8'),
      key: fs.readFileSync(process.env.BROKERD_TLS_KEY, 'utf8'),
    } : {}),
  } : undefined,
  logLevel: logLevel.NOTHING,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { retries: 2 },
});

async function main() {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const messages = [];
  for (let i = 0; i < Number(count); ++i) messages.push({ key: `k${i}`, value: `js-sasl-${i}` });
  await producer.send({ topic, messages, acks: -1 });
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: `js-sasl-${mechanism}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${seen.length} records within 30 s`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value.toString());
        if (seen.length >= Number(count)) {
          clearTimeout(timer);
          resolve();
        }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  return { produced: messages.length, consumed: seen };
}

main()
  .then((out) => {
    console.log(JSON.stringify(out));
    process.exit(0);
  })
  .catch((e) => {
    console.log(JSON.stringify({ error: String(e && (e.type || e.name)), message: String(e && e.message) }));
    process.exit(1);
  });
