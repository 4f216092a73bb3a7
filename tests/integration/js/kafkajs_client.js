// KafkaJS driver for the integration tests. Prints one JSON object on stdout.
//   node kafkajs_client.js produce BROKER TOPIC CODEC KEYS PER_KEY
//   node kafkajs_client.js admin BROKER TOPIC PARTITIONS
'use strict';
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, CompressionTypes, logLevel } = require('kafkajs');

const [, , command, broker, topic, ...rest] = process.argv;
const kafka = new Kafka({
  clientId: 'brokerd-it-kafkajs',
  brokers: [broker],
  logLevel: logLevel.ERROR,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { retries: 3 },
});

async function produce(codec, keys, perKey) {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const compression = codec === 'gzip' ? CompressionTypes.GZIP : CompressionTypes.None;
  const acks = [];
  try {
    // Several sends of interleaved keys: each key spans many batches.
    for (let seq = 0; seq < perKey; seq += 10) {
      const messages = [];
      for (let s = seq; s < Math.min(seq + 10, perKey); ++s) {
        for (let k = 0; k < keys; ++k) messages.push({ key: `js-${codec}-key${k}`, value: `js-${codec}-key${k}:${s}` });
      }
      const res = await producer.send({ topic, messages, acks: -1, compression });
      for (const r of res) acks.push({ partition: r.partition, errorCode: r.errorCode, baseOffset: r.baseOffset });
    }
  } finally {
    await producer.disconnect();
  }
  return { acks };
}

async function admin(partitions) {
  const a = kafka.admin();
  await a.connect();
  try {
    const created = await a.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
    const createdAgain = await a.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] });
    const metadata = await a.fetchTopicMetadata({ topics: [topic] });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ value: 'a', partition: 0 }, { value: 'b', partition: 0 }, { value: 'c', partition: 1 }] });
    await producer.disconnect();
    const offsets = await a.fetchTopicOffsets(topic);
    const topics = await a.listTopics();
    return { created, createdAgain, metadata, offsets, topics };
  } finally {
    await a.disconnect();
  }
}

async function main() {
  let out;
  if (command === 'produce') out = await produce(rest[0], Number(rest[1]), Number(rest[2]));
  else if (command === 'admin') out = await admin(Number(rest[0]));
  else throw new Error(`unknown command ${command}`);
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(`kafkajs failure: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
