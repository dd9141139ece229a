// A render that takes seconds: a comparison of it can be caught under way.
{
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'slow' },
  data: { sum: std.toString(std.foldl(function(a, b) a + b, std.range(1, 2000000), 0)) },
}
