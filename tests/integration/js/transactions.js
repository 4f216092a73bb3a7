// KafkaJS transactions for the integration tests. Prints one JSON object on stdout.
//   node transactions.js BROKER IN_TOPIC OUT_TOPIC GROUP
// A consume-transform-produce step: a read_committed consumer (eachBatch) reads IN_TOPIC; each
// batch is copied to OUT_TOPIC inside a transaction that also sends the consumer's offsets
// (producer.transaction(), sendOffsets); the first transaction is aborted, the others
// committed. Then it reads OUT_TOPIC back with read_committed and reports what it saw.
'use strict';
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const { Kafka, logLevel } = require('kafkajs');

const [, , broker, inTopic, outTopic, group] = process.argv;
const kafka = new Kafka({
  clientId: 'brokerd-it-txn',
  brokers: [broker],
  logLevel: logLevel.NOTHING,
  connectionTimeout: 5000,
  requestTimeout: 15000,
  retry: { initialRetryTime: 50, maxRetryTime: 1000, retries: 30 },
});

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

async function copy(total) {
  const producer = kafka.producer({ transactionalId: `${group}-txn`, maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  const consumer = kafka.consumer({ groupId: group, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topic: inTopic, fromBeginning: true });
  let copied = 0;
  let aborted = 0;
  let transactions = 0;
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
      if (batch.messages.length === 0) return;
      const txn = await producer.transaction();
      try {
        await txn.send({
          topic: outTopic,
          messages: batch.messages.map((m) => ({ key: m.key, value: Buffer.from(m.value.toString().replace('in-', 'out-')) })),
        });
        const last = batch.messages[batch.messages.length - 1];
        await txn.sendOffsets({
          consumerGroupId: group,
          topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: (BigInt(last.offset) + 1n).toString() }] }],
        });
        transactions += 1;
        if (transactions === 1) {
          await txn.abort();
          aborted += batch.messages.length;
          throw new Error('aborted on purpose');  // the batch is read again
        }
        await txn.commit();
      } catch (e) {
        if (e.message !== 'aborted on purpose') {
          await txn.abort().catch(() => {});
          throw e;
        }
        throw e;
      }
      for (const m of batch.messages) resolveOffset(m.offset);
      await heartbeat();
      copied += batch.messages.length;
      if (copied >= total) done();
    },
  });
  await withTimeout(finished, 60000, 'copying');
  await consumer.disconnect();
  await producer.disconnect();
  return { copied, aborted, transactions };
}

async function readBack(expected) {
  const consumer = kafka.consumer({ groupId: `${group}-reader`, readUncommitted: false });
  await consumer.connect();
  await consumer.subscribe({ topic: outTopic, fromBeginning: true });
  const values = [];
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  await consumer.run({
    eachMessage: async ({ message }) => {
      values.push(message.value.toString());
      if (values.length >= expected) done();
    },
  });
  await withTimeout(finished, 30000, 'reading back').catch(() => {});
  // A little longer: anything beyond what was expected (an aborted copy) would arrive now.
  await new Promise((r) => setTimeout(r, 1500));
  await consumer.disconnect();
  return values;
}

async function main() {
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(inTopic);
  await admin.disconnect();
  const total = offsets.reduce((n, o) => n + Number(o.high), 0);
  const result = await copy(total);
  result.values = await readBack(total);
  const adminAfter = kafka.admin();
  await adminAfter.connect();
  result.committed = await adminAfter.fetchOffsets({ groupId: group, topics: [inTopic] });
  await adminAfter.disconnect();
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
