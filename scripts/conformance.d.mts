export declare const SCENARIOS: readonly string[];
export declare const ALWAYS_SKIPPED: string;
export interface ScenarioResult {
  scenario: string;
  exitCode: number | null;
  passed: number;
  failed: number;
  skipped: number;
  other: number;
  ok: boolean;
  failures: string[];
}
export declare function startDemo(env: Record<string, string>): Promise<{ url: string; stop(): Promise<void>; output(): string }>;
export declare function runConformance(url: string, outputDir: string): Promise<ScenarioResult[]>;
