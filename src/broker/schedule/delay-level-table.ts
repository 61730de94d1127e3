/**
 * Delay levels (mirrors `ScheduleMessageService.parseDelayLevel`): `messageDelayLevel` is a
 * space-separated list such as `1s 5s 10s 30s 1m ... 2h`; token i (0-based) is level i+1 and
 * is served by queue i of SCHEDULE_TOPIC_XXXX. Units: s, m, h, d.
 */

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export class DelayLevelTable {
  private readonly delays: number[];

  /** @throws Error naming the bad token when the text does not parse. */
  constructor(text: string) {
    const tokens = text.trim().split(/\s+/).filter((t) => t.length > 0);
    if (tokens.length === 0) throw new Error('messageDelayLevel is empty');
    this.delays = tokens.map((t) => {
      const unit = UNIT_MS[t[t.length - 1]!];
      const digits = t.slice(0, -1);
      if (unit === undefined || !/^\d+$/.test(digits)) {
        throw new Error(`messageDelayLevel token "${t}" is not <number><s|m|h|d>`);
      }
      return Number(digits) * unit;
    });
  }

  /** Highest level (= number of levels). */
  get maxLevel(): number {
    return this.delays.length;
  }

  /** Delay of a level in ms, or undefined for a level outside 1..maxLevel. */
  delayMs(level: number): number | undefined {
    return level >= 1 && level <= this.delays.length ? this.delays[level - 1] : undefined;
  }

  /** Levels 1..maxLevel. */
  levels(): number[] {
    return this.delays.map((_, i) => i + 1);
  }

  static queueIdOf(level: number): number {
    return level - 1;
  }

  static levelOf(queueId: number): number {
    return queueId + 1;
  }
}
