"""What every process shares: settings, logs, trace context, metrics, the FastStream worker roles."""
