// KafkaJS re-authenticating on its connections (KIP-368). Prints one JSON object on stdout.
//   node reauth_client.js BROKER USER PASSWORD TOPIC SECONDS
// Produces a record every 200 ms for SECONDS on one producer; KafkaJS re-authenticates when
// less than reauthenticationThreshold of its session is left.
'use strict';
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = require('kafkajs');

const [, , broker, username, password, topic, seconds] = process.argv;
const kafka = new Kafka({
  clientId: 'brokerd-it-kafkajs-reauth',
  brokers: [broker],
  sasl: { mechanism: 'plain', username, password },
  reauthenticationThreshold: 1000,
  logLevel: logLevel.NOTHING,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { retries: 0 },
});

async function main() {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const end = Date.now() + Number(seconds) * 1000;
  let sent = 0;
  while (Date.now() < end) {
    await producer.send({ topic, messages: [{ value: `reauth-${sent}` }], acks: -1 });
    sent += 1;
    await new Promise((r) => setTimeout(r, 200));
  }
  await producer.disconnect();
  return { sent };
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
