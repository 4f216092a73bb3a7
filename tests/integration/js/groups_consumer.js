// A KafkaJS consumer group for the group tests: MEMBERS consumers with eachMessage read until
// COUNT records have been seen, then print {count, distinct} as JSON.
//   node groups_consumer.js BROKER TOPIC GROUP COUNT MEMBERS
'use strict';
const { Kafka, logLevel } = require('kafkajs');

const [, , broker, topic, groupId, countArg, membersArg] = process.argv;
const expected = Number(countArg);
const kafka = new Kafka({ clientId: 'brokerd-it-groups', brokers: [broker], logLevel: logLevel.ERROR });

async function main() {
  const seen = [];
  const consumers = [];
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  for (let i = 0; i < Number(membersArg); ++i) {
    const c = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 500 });
    await c.connect();
    await c.subscribe({ topic, fromBeginning: true });
    await c.run({
      eachMessage: async ({ partition, message }) => {
        seen.push(`${partition}:${message.offset}`);
        if (new Set(seen).size >= expected) done();
      },
    });
    consumers.push(c);
  }
  const timer = setTimeout(done, 60000);
  await finished;
  clearTimeout(timer);
  for (const c of consumers) await c.disconnect();
  console.log(JSON.stringify({ count: seen.length, distinct: new Set(seen).size }));
}

main().catch((e) => { console.error(e); process.exit(1); });
