/** The few demo metrics, in Prometheus text format (a later issue moves this to OpenTelemetry). */
export class DemoMetrics {
  created = 0;

  constructor(private readonly running: () => number) {}

  render(): string {
    return [
      '# HELP mcp_tasks_running Tasks running on this node.',
      '# TYPE mcp_tasks_running gauge',
      `mcp_tasks_running ${this.running()}`,
      '# HELP mcp_tasks_created_total Tasks created on this node.',
      '# TYPE mcp_tasks_created_total counter',
      `mcp_tasks_created_total ${this.created}`,
      '',
    ].join('\n');
  }
}
