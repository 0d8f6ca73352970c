CREATE TABLE t (l STRING) WITH (connector = 's3', bucket = 'b' /* c */, -- d
 region = 'x')