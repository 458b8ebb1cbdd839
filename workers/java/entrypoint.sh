#!/bin/sh
# KEEPALIVE_TIMEOUT_S sets the JDK client's idle keep-alive timeout
# (jdk.httpclient.keepalive.timeout, seconds; the JDK's default is 30 s).
# -XX:ActiveProcessorCount=1 matches the 1-CPU container the lab starts.
opts="-XX:ActiveProcessorCount=1 -Xss512k"
if [ -n "${KEEPALIVE_TIMEOUT_S:-}" ]; then
  opts="$opts -Djdk.httpclient.keepalive.timeout=$KEEPALIVE_TIMEOUT_S"
fi
cp=/app/classes:/usr/share/java/amqp-client.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar
# The third-party clients (CLIENT_MODE okhttp, apache) and their dependencies.
cp=$cp:/usr/share/java/okhttp.jar:/usr/share/java/okio.jar
cp=$cp:/usr/share/java/httpclient.jar:/usr/share/java/httpcore.jar:/usr/share/java/commons-logging.jar:/usr/share/java/commons-codec.jar
exec java $opts -cp "$cp" notifierlab.Worker "$@"
