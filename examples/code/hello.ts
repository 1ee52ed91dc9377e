// The default example `npm start` runs: TypeScript, type-stripped and run in a QuickJS cell.
interface Job { records: number; perSecond: number }
const job: Job = { records: 4_812_033, perSecond: 1_750 };
const seconds = job.records / job.perSecond;
console.log(`processing ${job.records} records`);
({ minutes: Math.floor(seconds / 60), seconds: Math.round(seconds % 60) });
