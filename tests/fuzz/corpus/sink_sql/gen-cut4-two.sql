CREATE TABLE a (l STRING) WITH (connector='s3', bucket='b1');
CREATE TABLE b (l STRING) WITH (connector='s3', bucket='b2', delivery_guarantee='exactly_once');