CREATE TABLE a (l STRING) WITH (connector='s3', bucket='b1');
CREATE TABLE b (l