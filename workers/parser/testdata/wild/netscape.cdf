<?xml version="1.0" encoding="windows-1252"?>
<!DOCTYPE CHANNEL SYSTEM "http://www.w3c.org/Channel.dtd">
<CHANNEL HREF="http://cdf.example.com/index.html" BASE="http://cdf.example.com/" LASTMOD="2026-12-01T10:00" PRECACHE="YES" LEVEL="0">
  <TITLE>Example Channel</TITLE>
  <ABSTRACT>An Active Channel of news</ABSTRACT>
  <LOGO HREF="http://cdf.example.com/logo.gif" STYLE="IMAGE"/>
  <SCHEDULE><INTERVALTIME DAY="1"/></SCHEDULE>
  <ITEM HREF="news/first.html" LASTMOD="2026-12-01T09:15">
    <TITLE>First headline</TITLE>
    <ABSTRACT>What happened first.</ABSTRACT>
  </ITEM>
  <ITEM HREF="http://cdf.example.com/news/second.html">
    <TITLE>Second headline</TITLE>
  </ITEM>
  <CHANNEL HREF="http://cdf.example.com/sport/">
    <TITLE>Sport</TITLE>
    <ITEM HREF="sport/match.html" LASTMOD="2026-11-30T20:00"><TITLE>Match report</TITLE></ITEM>
  </CHANNEL>
</CHANNEL>
